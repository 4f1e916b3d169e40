#if Serve
    import Stash

    /// Coalesces concurrent misses of one URL: the first becomes the leader and fetches from the
    /// origin; the others wait for it to finish, then look the cache up again (nginx's
    /// `proxy_cache_lock`).
    ///
    /// It also keeps invalidations (RFC 9111 §4.4) from losing a race with a fill: an invalidation
    /// marks the fill under way and any fill that begins before it ends, whose leader then stores
    /// nothing or removes what it stored, and waits while that leader is storing, so that once
    /// the invalidation returns no tier holds the answer that was asked for before it.
    final class FillCoordinator: Sendable {
        /// What ``begin(_:)`` decided.
        enum Role {
            /// Fetch, then call ``finish(_:)``.
            case leader
            /// Another request fetched it; look the cache up again.
            case follower
        }

        /// A store that ``beginStore(_:)`` let start, for ``endStore(_:)``.
        struct Store {
            let key: String
            /// The fill the store belongs to, `nil` when none was under way.
            let fill: UInt64?
        }

        /// A fill under way: the requests waiting for it, whether its URL was invalidated since
        /// it began, and the stores of its answer under way with the invalidations waiting for
        /// them.
        private struct Fill {
            let id: UInt64
            var waiters: [CheckedContinuation<Void, Never>] = []
            var isInvalidated = false
            var stores = 0
            var invalidations: [CheckedContinuation<Void, Never>] = []
        }

        private struct State {
            var fills: [String: Fill] = [:]
            var nextID: UInt64 = 0
            /// The keys, and the key prefixes, whose invalidations are under way (a count each: two
            /// may overlap).
            var invalidatedKeys: [String: Int] = [:]
            var invalidatedPrefixes: [String] = []

            /// Whether an invalidation of `key` is under way.
            func isBeingInvalidated(_ key: String) -> Bool {
                invalidatedKeys[key] != nil || invalidatedPrefixes.contains { key.hasPrefix($0) }
            }

            /// Marks `key`'s fill as invalidated; the fill, when it is storing.
            mutating func mark(_ key: String) -> (key: String, id: UInt64)? {
                guard let fill = fills[key] else { return nil }
                fills[key]!.isInvalidated = true
                return fill.stores > 0 ? (key, fill.id) : nil
            }
        }

        private let state = LockedValue(State())

        /// Counts the invalidations under way for the disk hits' copies into memory, which belong
        /// to no fill (see ``InvalidationClock``); every invalidation here counts in it.
        let copies = InvalidationClock()

        /// Makes the caller the leader for `key`, or waits for the current leader to finish.
        func begin(_ key: String) async -> Role {
            if lead(key) { return .leader }
            // A leader that finished in between leaves no entry: the wait returns at once.
            await wait(key)
            return .follower
        }

        /// Makes the caller the leader for `key` if no fill of it is under way, without waiting:
        /// `false` leaves nothing to finish (``begin(_:)`` then waits for the current leader).
        func lead(_ key: String) -> Bool {
            state.withLock { state -> Bool in
                guard state.fills[key] == nil else { return false }
                state.nextID += 1
                // A fill that begins while its URL is being invalidated may read a tier the
                // invalidation has not cleaned yet (the shared tier): it stores nothing.
                state.fills[key] = Fill(id: state.nextID, isInvalidated: state.isBeingInvalidated(key))
                return true
            }
        }

        private func wait(_ key: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let queued = state.withLock { state -> Bool in
                    guard state.fills[key] != nil else { return false }
                    state.fills[key]!.waiters.append(continuation)
                    return true
                }
                if !queued { continuation.resume() }
            }
        }

        /// Invalidates `key` (RFC 9111 §4.4): marks the fill of it under way, if any, so that it
        /// stores nothing more (its answer was asked for before), waits for a store of it under
        /// way to end (its leader then removes what it stored), and runs `remove`, which removes
        /// what the tiers hold.
        ///
        /// A fill of `key` that begins before this returns is marked too: it may read what
        /// `remove` has not removed yet (a shared tier's entry, which the copy into this
        /// instance's tiers would then outlive).
        func invalidate(_ key: String, removing remove: () async -> Void) async {
            await copies.invalidating(base: key) {
                let storing = state.withLock { state in
                    state.invalidatedKeys[key, default: 0] += 1
                    return state.mark(key).map { [$0] } ?? []
                }
                await waitForStores(of: storing)
                await remove()
                state.withLock { state in
                    state.invalidatedKeys[key]! -= 1
                    if state.invalidatedKeys[key] == 0 { state.invalidatedKeys[key] = nil }
                }
            }
        }

        /// ``invalidate(_:removing:)`` for every key that starts with `prefix`.
        func invalidate(keysStartingWith prefix: String, removing remove: () async -> Void) async {
            await copies.invalidatingAll {
                let storing = state.withLock { state in
                    state.invalidatedPrefixes.append(prefix)
                    return state.fills.keys.filter { $0.hasPrefix(prefix) }.compactMap { state.mark($0) }
                }
                await waitForStores(of: storing)
                await remove()
                state.withLock { state in
                    _ = state.invalidatedPrefixes.remove(at: state.invalidatedPrefixes.firstIndex(of: prefix)!)
                }
            }
        }

        /// Runs `store`, which stores what a fetch of `key` got, unless its fill was invalidated;
        /// when an invalidation arrives while it runs, runs `undo` (which removes what `store`
        /// stored) before that invalidation goes on.
        ///
        /// - Returns: `false` when nothing was stored (the fill was invalidated before).
        @discardableResult
        func storing(_ key: String, _ store: () async -> Void, undo: () async -> Void) async -> Bool {
            guard let begun = beginStore(key) else { return false }
            await store()
            if wasInvalidated(begun) { await undo() }
            endStore(begun)
            return true
        }

        /// Waits until each of `fills` stores nothing more, or has ended.
        ///
        /// A fill of the same key that began after the mark is not waited for.
        private func waitForStores(of fills: [(key: String, id: UInt64)]) async {
            for (key, id) in fills {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let queued = state.withLock { state -> Bool in
                        guard let fill = state.fills[key], fill.id == id, fill.stores > 0 else { return false }
                        state.fills[key]!.invalidations.append(continuation)
                        return true
                    }
                    if !queued { continuation.resume() }
                }
            }
        }

        /// Whether the fill that `store` belongs to was invalidated since it began.
        func wasInvalidated(_ store: Store) -> Bool {
            guard let id = store.fill else { return false }
            return state.withLock { state in
                guard let fill = state.fills[store.key], fill.id == id else { return false }
                return fill.isInvalidated
            }
        }

        /// Lets a store of what a fetch of `key` got begin, unless its fill was invalidated.
        ///
        /// `nil`: store nothing. An invalidation waits for the store until ``endStore(_:)``; what
        /// it stored is removed before then when ``wasInvalidated(_:)`` says so.
        func beginStore(_ key: String) -> Store? {
            state.withLock { state -> Store? in
                guard let fill = state.fills[key] else { return Store(key: key, fill: nil) }
                guard !fill.isInvalidated else { return nil }
                state.fills[key]!.stores += 1
                return Store(key: key, fill: fill.id)
            }
        }

        /// Ends a store that ``beginStore(_:)`` let begin, and wakes the invalidations waiting
        /// for it.
        func endStore(_ store: Store) {
            guard let id = store.fill else { return }
            let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                guard let fill = state.fills[store.key], fill.id == id else { return [] }
                state.fills[store.key]!.stores -= 1
                guard fill.stores == 1 else { return [] }
                state.fills[store.key]!.invalidations = []
                return fill.invalidations
            }
            for continuation in woken { continuation.resume() }
        }

        /// Ends the leader's fill of `key` and wakes its followers (and any invalidation still
        /// waiting for it).
        func finish(_ key: String) {
            let fill = state.withLock { $0.fills.removeValue(forKey: key) }
            for continuation in (fill?.waiters ?? []) + (fill?.invalidations ?? []) { continuation.resume() }
        }
    }
#endif
