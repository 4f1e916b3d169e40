extension MemoryCache {
    /// S3-FIFO's ghost queue: the keys most recently evicted from the small queue, without their
    /// values, oldest first.
    ///
    /// A key leaves it when it is stored again (it then goes straight to the main queue) or when
    /// newer ghosts push it out. Forgetting a key removes it from `numbers` only, which is O(1);
    /// its place in `order` goes stale and is skipped when popped, and `order` is compacted
    /// whenever stale places would outnumber live ones, so it stays O(ghosts) and every
    /// operation is O(1) amortized.
    @usableFromInline
    struct GhostQueue {
        /// A key and the number it was given when it joined the queue.
        @usableFromInline
        struct Ghost {
            @usableFromInline var key: Key
            @usableFromInline var number: Int

            @inlinable
            init(key: Key, number: Int) {
                self.key = key
                self.number = number
            }
        }

        /// The keys in the order they joined, from `start` on; a place is stale when `numbers`
        /// no longer gives its key the same number.
        @usableFromInline var order: [Ghost] = []
        @usableFromInline var start = 0
        /// The live ghosts, each with the number of its place in `order`.
        @usableFromInline var numbers: [Key: Int] = [:]
        @usableFromInline var nextNumber = 0

        @usableFromInline
        init() {}

        @inlinable var count: Int { numbers.count }

        /// Removes `key` if it is a ghost; returns whether it was.
        @inlinable
        mutating func remove(_ key: Key) -> Bool {
            numbers.removeValue(forKey: key) != nil
        }

        /// Adds `key` as the newest ghost, then forgets the oldest ones until at most `limit`
        /// remain.
        @inlinable
        mutating func append(_ key: Key, limit: Int) {
            numbers[key] = nextNumber
            order.append(Ghost(key: key, number: nextNumber))
            nextNumber += 1
            while numbers.count > limit {
                let oldest = order[start]
                start += 1
                if numbers[oldest.key] == oldest.number { numbers[oldest.key] = nil }
            }
            if order.count > 2 * numbers.count + 16 {
                order = order[start...].filter { numbers[$0.key] == $0.number }
                start = 0
            }
        }

        /// The live ghosts, oldest first.
        ///
        /// For tests; O(n).
        var keysOldestFirst: [Key] {
            order[start...].filter { numbers[$0.key] == $0.number }.map(\.key)
        }

        /// Describes the first broken invariant, or returns `nil` if they all hold.
        ///
        /// For tests; O(n).
        func invariantViolation() -> String? {
            let live = keysOldestFirst
            guard live.count == numbers.count else {
                return "ghost queue holds \(live.count) keys, its index \(numbers.count)"
            }
            return nil
        }
    }
}
