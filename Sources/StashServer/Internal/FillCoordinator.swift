#if Serve
    import Stash

    /// Coalesces concurrent misses of one URL: the first becomes the leader and fetches from the
    /// origin; the others wait for it to finish, then look the cache up again (nginx's
    /// `proxy_cache_lock`).
    final class FillCoordinator: Sendable {
        /// What ``begin(_:)`` decided.
        enum Role {
            /// Fetch, then call ``finish(_:)``.
            case leader
            /// Another request fetched it; look the cache up again.
            case follower
        }

        /// A fill under way: the requests waiting for it, and whether its URL was invalidated
        /// since it began.
        private struct Fill {
            var waiters: [CheckedContinuation<Void, Never>] = []
            var isInvalidated = false
        }

        private let fills = LockedValue([String: Fill]())

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
            fills.withLock { fills -> Bool in
                guard fills[key] == nil else { return false }
                fills[key] = Fill()
                return true
            }
        }

        private func wait(_ key: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let queued = fills.withLock { fills -> Bool in
                    guard fills[key] != nil else { return false }
                    fills[key]!.waiters.append(continuation)
                    return true
                }
                if !queued { continuation.resume() }
            }
        }

        /// Notes that `key`'s stored responses were invalidated (RFC 9111 §4.4) while a fill of it
        /// may be under way: that fill's answer was asked for before, so its leader removes what
        /// it stored before it finishes (``wasInvalidated(_:)``), and no request after the
        /// invalidation is answered with it.
        func invalidate(_ key: String) {
            fills.withLock { fills in
                if fills[key] != nil { fills[key]!.isInvalidated = true }
            }
        }

        /// ``invalidate(_:)`` for every fill under way whose key starts with `prefix`.
        func invalidate(keysStartingWith prefix: String) {
            fills.withLock { fills in
                for key in fills.keys where key.hasPrefix(prefix) { fills[key]!.isInvalidated = true }
            }
        }

        /// Whether `key` was invalidated since its fill began (see ``invalidate(_:)``).
        func wasInvalidated(_ key: String) -> Bool {
            fills.withLock { $0[key]?.isInvalidated ?? false }
        }

        /// Ends the leader's fill of `key` and wakes its followers.
        func finish(_ key: String) {
            let woken = fills.withLock { $0.removeValue(forKey: key) }?.waiters ?? []
            for continuation in woken { continuation.resume() }
        }
    }
#endif
