#if Serve
    import Stash

    /// Keeps a disk hit's copy into the memory tier from outliving an invalidation of its URL
    /// (RFC 9111 §4.4).
    ///
    /// A disk thread reads an entry, then copies it into the memory tier; an invalidation removes
    /// the URL from memory, then from disk. Read before the disk removal and copied after the
    /// memory removal, the copy would answer the requests after the invalidation with the
    /// response it removed. So each invalidation counts in one of ``stripeCount`` stripes, by its
    /// URL (a purge of a prefix in all of them), when it begins and when it ends. A copy takes its
    /// stripe's count before the read (a ``Ticket``; none while an invalidation of the stripe is
    /// under way), makes the copy, then reads the count again: if an invalidation began since, it
    /// undoes the copy. An invalidation that begins after that second read removes the copy itself.
    /// Neither side holds the lock while it copies or removes, so disk threads never wait on each
    /// other's copies. An undone copy costs the next request of the URL one more disk read.
    final class InvalidationClock: Sendable {
        private struct Stripe {
            /// Bumped when an invalidation begins and when it ends.
            var generation: UInt64 = 0
            /// Invalidations under way.
            var active = 0
        }

        /// What a copy into memory checks: its stripe's generation when no invalidation was under
        /// way before the read.
        struct Ticket {
            fileprivate let stripe: Int
            fileprivate let generation: UInt64
        }

        static let stripeCount = 64
        private let stripes = LockedValue([Stripe](repeating: Stripe(), count: stripeCount))

        private static func stripe(of base: Substring) -> Int {
            Int(UInt(bitPattern: base.hashValue) % UInt(stripeCount))
        }

        /// The base key of a storage key: the key up to its first line break (a variant's key is
        /// its base key, a line break and its `Vary` values).
        private static func base(of key: String) -> Substring {
            key.firstIndex(of: "\n").map { key[..<$0] } ?? key[...]
        }

        /// The ticket of a read of `key` about to begin; `nil` while an invalidation of its stripe
        /// is under way (no copy then).
        func ticket(forKey key: String) -> Ticket? {
            let stripe = Self.stripe(of: Self.base(of: key))
            return stripes.withLock { stripes in
                stripes[stripe].active == 0 ? Ticket(stripe: stripe, generation: stripes[stripe].generation) : nil
            }
        }

        /// Runs `copy` if the ticket allows it, then `undo` if an invalidation of the ticket's
        /// stripe began since the ticket was taken.
        func copy(since ticket: Ticket?, _ copy: () -> Void, undo: () -> Void) {
            guard let ticket else { return }
            copy()
            let changed = stripes.withLock { $0[ticket.stripe].generation != ticket.generation }
            if changed { undo() }
        }

        /// Runs `invalidation` of `base`, counted in its stripe while it runs.
        func invalidating(base: String, _ invalidation: () async -> Void) async {
            let stripe = Self.stripe(of: base[...])
            count(stripe..<stripe + 1, by: 1)
            await invalidation()
            count(stripe..<stripe + 1, by: -1)
        }

        /// Runs `invalidation` of many URLs (a prefix), counted in every stripe while it runs.
        func invalidatingAll(_ invalidation: () async -> Void) async {
            count(0..<Self.stripeCount, by: 1)
            await invalidation()
            count(0..<Self.stripeCount, by: -1)
        }

        private func count(_ range: Range<Int>, by change: Int) {
            stripes.withLock { stripes in
                for stripe in range {
                    stripes[stripe].active += change
                    stripes[stripe].generation &+= 1
                }
            }
        }
    }
#endif
