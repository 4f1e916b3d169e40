extension MemoryCache {
    /// S3-FIFO's ghost queue: the keys most recently evicted from the small queue, oldest first,
    /// as fingerprints.
    ///
    /// Like the paper's, it keeps a fingerprint of each key (its hash value) rather than the
    /// key: a ghost then costs the same for any key and keeps no key alive, and the queue hashes
    /// integers rather than keys. Two keys with the same hash value are taken for one another,
    /// which can only send a new entry to the main queue instead of the small one.
    ///
    /// A fingerprint leaves the queue when its key is stored again or when newer ghosts push it
    /// out. Forgetting one removes it from `numbers` only, in O(1); its place in `order` goes
    /// stale and is skipped when popped. `order` is compacted in place whenever its places
    /// outnumber the live ghosts by more than two to one, so it stays O(ghosts) and every
    /// operation is O(1) amortized.
    @usableFromInline
    struct GhostQueue {
        /// A fingerprint and the number it was given when it joined the queue.
        @usableFromInline
        struct Ghost {
            @usableFromInline var fingerprint: Int
            @usableFromInline var number: Int

            @inlinable
            init(fingerprint: Int, number: Int) {
                self.fingerprint = fingerprint
                self.number = number
            }
        }

        /// The ghosts in the order they joined, from `start` on; a place is stale when `numbers`
        /// no longer gives its fingerprint the same number.
        @usableFromInline var order: [Ghost] = []
        @usableFromInline var start = 0
        /// The live ghosts, each with the number of its place in `order`.
        @usableFromInline var numbers: [Int: Int] = [:]
        @usableFromInline var nextNumber = 0

        @usableFromInline
        init() {}

        @inlinable var count: Int { numbers.count }

        /// Removes the key with hash value `fingerprint` if it is a ghost; returns whether it was.
        @inlinable
        mutating func remove(_ fingerprint: Int) -> Bool {
            guard !numbers.isEmpty else { return false }
            return numbers.removeValue(forKey: fingerprint) != nil
        }

        /// Adds the key with hash value `fingerprint` as the newest ghost, then forgets the oldest
        /// ones until at most `limit` remain.
        @inlinable
        mutating func append(_ fingerprint: Int, limit: Int) {
            guard limit > 0 else {
                // Nothing may stay, not even this one.
                numbers.removeAll(keepingCapacity: true)
                order.removeAll(keepingCapacity: true)
                start = 0
                return
            }
            numbers[fingerprint] = nextNumber
            order.append(Ghost(fingerprint: fingerprint, number: nextNumber))
            nextNumber += 1
            while numbers.count > limit {
                let oldest = order[start]
                start += 1
                if let index = numbers.index(forKey: oldest.fingerprint), numbers[index].value == oldest.number {
                    numbers.remove(at: index)
                }
            }
            if order.count > 2 * numbers.count + 16 { compact() }
        }

        /// Drops the popped and the stale places, keeping the array's storage.
        @inlinable
        mutating func compact() {
            var kept = 0
            for place in start..<order.count where numbers[order[place].fingerprint] == order[place].number {
                order[kept] = order[place]
                kept += 1
            }
            order.removeLast(order.count - kept)
            start = 0
        }

        /// The live ghosts' fingerprints, oldest first.
        ///
        /// For tests; O(n).
        var fingerprintsOldestFirst: [Int] {
            order[start...].filter { numbers[$0.fingerprint] == $0.number }.map(\.fingerprint)
        }

        /// Describes the first broken invariant, or returns `nil` if they all hold.
        ///
        /// For tests; O(n).
        func invariantViolation() -> String? {
            let live = fingerprintsOldestFirst
            guard live.count == numbers.count else {
                return "ghost queue holds \(live.count) fingerprints, its index \(numbers.count)"
            }
            return nil
        }
    }
}
