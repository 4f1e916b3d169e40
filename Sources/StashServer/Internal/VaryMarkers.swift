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
    /// bound, their keys took 180 bytes each (18 MiB at 100,000 URLs). They are kept as 128-bit
    /// fingerprints (``Fingerprint``, about 64 bytes each with the table and the ring), at most
    /// ``plainLimit`` of them; when full, CLOCK picks the one to forget (a URL looked up since the
    /// hand last passed it is passed over once), so that the URLs whose disk hits recur keep the
    /// saved read. URLs with a marker are kept by their full text: a fingerprint never selects a
    /// variant.
    final class VaryMarkers: Sendable {
        private struct State {
            /// URLs with a marker, never forgotten but by ``forget(base:)``/``removeAll()``.
            var markers: [String: ResponseStore.VaryMarker] = [:]
            /// The fingerprints of URLs known to have no marker → their slot in ``ring``.
            var plain: [Fingerprint: Int32] = [:]
            /// CLOCK's ring: each slot's fingerprint, whether it is used, and whether it was looked
            /// up since the hand last passed it.
            var ring: ContiguousArray<Slot> = []
            /// Free slots of ``ring`` (their URL left ``plain``).
            var free: [Int32] = []
            var hand = 0
        }

        /// A URL's 128-bit fingerprint: two independently seeded hashes of its text.
        ///
        /// Two URLs share one with a probability of about 2⁻¹²⁸ per pair. If two did, the worst
        /// outcome is that a URL whose marker this process has not read yet is taken for one
        /// without a marker until its next store: a stored variant is then missed, never another
        /// URL's response served (the entry read is always looked up by the URL's full key).
        struct Fingerprint: Hashable {
            let high: UInt64
            let low: UInt64

            init(_ base: String) {
                var first = Hasher()
                first.combine(UInt8(0x5A))
                first.combine(base)
                var second = Hasher()
                second.combine(UInt8(0xA5))
                second.combine(base)
                high = UInt64(bitPattern: Int64(first.finalize()))
                low = UInt64(bitPattern: Int64(second.finalize()))
            }

            func hash(into hasher: inout Hasher) { hasher.combine(low) }
        }

        /// A slot of CLOCK's ring.
        struct Slot {
            var fingerprint: Fingerprint
            var isUsed: Bool
            var isReferenced: Bool
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
                guard let slot = state.plain[Fingerprint(base)].map(Int.init) else { return .none }
                if !state.ring[slot].isReferenced { state.ring[slot].isReferenced = true }
                return .some(nil)
            }
        }

        /// Records `marker` (`nil`: none) as `base`'s, replacing what was known; with `ifUnknown`,
        /// only when nothing was known (a read that raced a store must not undo it).
        func set(_ marker: ResponseStore.VaryMarker?, for base: String, ifUnknown: Bool = false) {
            let fingerprint = Fingerprint(base)
            state.withLock { state in
                if ifUnknown, state.markers[base] != nil || state.plain[fingerprint] != nil { return }
                if let marker {
                    Self.removePlain(fingerprint, from: &state)
                    state.markers[base] = marker
                    return
                }
                state.markers[base] = nil
                guard state.plain[fingerprint] == nil else { return }
                let slot: Int
                if let reused = state.free.popLast() {
                    slot = Int(reused)
                } else if state.ring.count < plainLimit {
                    slot = state.ring.count
                    state.ring.append(Slot(fingerprint: fingerprint, isUsed: false, isReferenced: false))
                } else {
                    // CLOCK: pass over (and clear) the URLs looked up since the hand last came by.
                    while state.ring[state.hand].isReferenced {
                        state.ring[state.hand].isReferenced = false
                        state.hand = (state.hand + 1) % state.ring.count
                    }
                    slot = state.hand
                    state.hand = (state.hand + 1) % state.ring.count
                    if state.ring[slot].isUsed { state.plain[state.ring[slot].fingerprint] = nil }
                }
                state.ring[slot] = Slot(fingerprint: fingerprint, isUsed: true, isReferenced: false)
                state.plain[fingerprint] = Int32(slot)
            }
        }

        /// Forgets what is known of `base`.
        func forget(base: String) {
            state.withLock { state in
                state.markers[base] = nil
                Self.removePlain(Fingerprint(base), from: &state)
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

        private static func removePlain(_ fingerprint: Fingerprint, from state: inout State) {
            guard let slot = state.plain.removeValue(forKey: fingerprint) else { return }
            state.ring[Int(slot)].isUsed = false
            state.ring[Int(slot)].isReferenced = false
            state.free.append(slot)
        }
    }
#endif
