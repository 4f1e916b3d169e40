#if Serve
    import Stash

    /// What this process knows of each URL's `Vary` marker: the markers it knows, and a bounded
    /// set of URLs known to have none.
    ///
    /// A URL it knows nothing of has its marker read from the disk tier (``ResponseStore/diskRead(base:requestHeaders:)``
    /// reads it in the same trip as the entry), so forgetting that a URL has no marker costs a
    /// disk hit one index read and is never wrong: a memory-tier lookup treats an unknown URL as
    /// one without a marker, which is what reading it would say unless a marker is stored, and a
    /// URL with a marker is never forgotten (its variants may be in memory only).
    ///
    /// URLs without a marker are nearly all of them, one per URL ever requested: kept without a
    /// bound, their keys took 180 bytes each (18 MiB at 100,000 URLs). At most ``plainLimit`` are
    /// kept; when full, CLOCK picks the one to forget (a URL looked up since the hand last passed
    /// it is passed over once), so that the URLs whose disk hits recur keep the saved read.
    final class VaryMarkers: Sendable {
        private struct State {
            /// URLs with a marker, never forgotten but by ``forget(base:)``/``removeAll()``.
            var markers: [String: ResponseStore.VaryMarker] = [:]
            /// URLs known to have no marker → their slot in ``ring``.
            var plain: [String: Int] = [:]
            /// CLOCK's ring: each slot's URL (`nil`: free) and whether it was looked up since the
            /// hand last passed it.
            var ring: [(base: String?, isReferenced: Bool)] = []
            /// Free slots of ``ring`` (their URL left ``plain``).
            var free: [Int] = []
            var hand = 0
        }

        private let state = LockedValue(State())
        /// The most URLs known to have no marker that are kept.
        let plainLimit: Int

        init(plainLimit: Int) {
            self.plainLimit = max(1, plainLimit)
        }

        /// What is known of `base`'s marker: `.none` nothing, `.some(nil)` that it has none,
        /// `.some(marker)` its marker.
        ///
        /// - Complexity: O(1) (one or two hash lookups of `base`, under a lock).
        func knowledge(of base: String) -> ResponseStore.VaryMarker?? {
            state.withLock { state in
                if !state.markers.isEmpty, let marker = state.markers[base] { return .some(marker) }
                guard let slot = state.plain[base] else { return .none }
                if !state.ring[slot].isReferenced { state.ring[slot].isReferenced = true }
                return .some(nil)
            }
        }

        /// Records `marker` (`nil`: none) as `base`'s, replacing what was known; with `ifUnknown`,
        /// only when nothing was known (a read that raced a store must not undo it).
        func set(_ marker: ResponseStore.VaryMarker?, for base: String, ifUnknown: Bool = false) {
            var evicted: String?
            state.withLock { state in
                if ifUnknown, state.markers[base] != nil || state.plain[base] != nil { return }
                if let marker {
                    Self.removePlain(base, from: &state)
                    state.markers[base] = marker
                    return
                }
                state.markers[base] = nil
                guard state.plain[base] == nil else { return }
                let slot: Int
                if let reused = state.free.popLast() {
                    slot = reused
                } else if state.ring.count < plainLimit {
                    slot = state.ring.count
                    state.ring.append((nil, false))
                } else {
                    // CLOCK: pass over (and clear) the URLs looked up since the hand last came by.
                    while state.ring[state.hand].isReferenced {
                        state.ring[state.hand].isReferenced = false
                        state.hand = (state.hand + 1) % state.ring.count
                    }
                    slot = state.hand
                    state.hand = (state.hand + 1) % state.ring.count
                    if let old = state.ring[slot].base {
                        state.plain[old] = nil
                        evicted = old
                    }
                }
                state.ring[slot] = (base, false)
                state.plain[base] = slot
            }
            _ = evicted  // released outside the lock
        }

        /// Forgets what is known of `base`.
        func forget(base: String) {
            state.withLock { state in
                state.markers[base] = nil
                Self.removePlain(base, from: &state)
            }
        }

        /// Forgets everything.
        func removeAll() {
            let old = state.withLock { state in
                let old = state
                state = State()
                return old
            }
            _ = old  // released outside the lock
        }

        /// URLs known to have a marker, and known to have none.
        var counts: (markers: Int, plain: Int) { state.withLock { ($0.markers.count, $0.plain.count) } }

        private static func removePlain(_ base: String, from state: inout State) {
            guard let slot = state.plain.removeValue(forKey: base) else { return }
            state.ring[slot] = (nil, false)
            state.free.append(slot)
        }
    }
#endif
