import Foundation

// How a cache is split into shards and how the operations on the whole cache visit them.
extension MemoryCache {
    /// The shard count for a cache created without one: four per active processor, at most 16,
    /// halved while a shard would get less than 1024 of either limit or less room than an
    /// entry at the `entryCostLimitRatio` cap needs.
    ///
    /// Four per processor keeps two threads' hits on one shard rare (a collision needs both
    /// threads' keys in the same shard at the same moment); past 16 the shards only cost memory.
    static func automaticShardCount(costLimit: Int, countLimit: Int, entryCostLimitRatio: Double) -> Int {
        let wanted = min(16, 4 * ProcessInfo.processInfo.activeProcessorCount)
        // An entry at the cap (ratio × costLimit) must fit in one shard (costLimit / shards).
        let fitting = Int((1 / entryCostLimitRatio).rounded(.down))
        var count = 1
        while count * 2 <= min(wanted, fitting), costLimit / (count * 2) >= 1024,
            countLimit == .max || countLimit / (count * 2) >= 1024
        {
            count *= 2
        }
        return count
    }

    /// Shard `index`'s share of `limit` split `count` ways: equal parts, the remainder going to
    /// the first shards; a limit of `Int.max` (none) stays `Int.max` in every shard.
    static func share(of limit: Int, shard index: Int, of count: Int) -> Int {
        guard limit != .max else { return .max }
        return limit / count + (index < limit % count ? 1 : 0)
    }

    /// Splits `total` among shards in proportion to `parts`, what each holds now.
    ///
    /// The shares add up to exactly `total` when the parts add up to more (else each keeps its
    /// part): each share is rounded down, and the units left over go to the shards with the
    /// largest remainders, the first of equals first. No share exceeds its part.
    static func proportionalShares(of total: Int, among parts: [Int]) -> [Int] {
        let sum = parts.reduce(0, +)
        guard sum > total else { return parts }
        // Exact in 128 bits: a part times the total can pass Int.max.
        var shares: [Int] = []
        var remainders: [Int] = []
        for part in parts {
            let (quotient, remainder) = sum.dividingFullWidth(part.multipliedFullWidth(by: total))
            shares.append(quotient)
            remainders.append(remainder)
        }
        let leftOver = total - shares.reduce(0, +)
        let order = parts.indices.sorted { lhs, rhs in
            remainders[lhs] != remainders[rhs] ? remainders[lhs] > remainders[rhs] : lhs < rhs
        }
        for index in order.prefix(leftOver) { shares[index] += 1 }
        return shares
    }

    /// Reads something from each shard, one after another, under its lock.
    @usableFromInline
    func eachShard<Part>(_ read: (inout State) -> Part) -> [Part] {
        (0..<shards.count).map { shards[$0].withLock(read) }
    }

    /// Empties each shard in O(1) under its lock; its entries are reported and released after.
    func removeAll(reason: MemoryEvictionReason) {
        for index in 0..<shards.count {
            let (removed, callback) = shards[index].withLock { state in
                state.catchUp()
                var removed = Storage()
                swap(&removed, &state.storage)
                if reason != .removedAll { state.statistics.evictions += removed.count }
                return (removed, state.onEviction)
            }
            guard let callback else { continue }
            for slot in removed.slotsFromBack() {
                callback(removed.key(at: slot), removed.value(at: slot), reason)
            }
        }
    }

    // MARK: - Test hooks

    /// How many shards the cache has.
    var shardCount: Int { shards.count }

    /// The only shard's state, for tests of a cache of one shard.
    var state: LockedValue<State> {
        precondition(shards.count == 1, "MemoryCache.state is for a cache of one shard; this one has \(shards.count)")
        return shardStates[0]
    }

    /// The shard that holds `key`.
    func shardIndex(forKey key: Key) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: key.hashValue) >> shardShift)
    }

    /// Each shard's keys from its next victim to its most recently used entry under LRU; under
    /// the FIFO policies, the small queue's then the main queue's, each oldest first.
    var keysInEvictionOrderByShard: [[Key]] {
        eachShard { state in
            state.catchUp()
            return state.storage.slotsFromBack().map { state.storage.key(at: $0) }
        }
    }

    /// ``keysInEvictionOrderByShard`` one shard after another.
    var keysInEvictionOrder: [Key] { keysInEvictionOrderByShard.flatMap { $0 } }

    /// The fingerprints (hash values) of the keys S3-FIFO remembers as recently evicted from
    /// its small queue, oldest first, one shard after another.
    var ghostFingerprints: [Int] { eachShard { $0.storage.ghosts.fingerprintsOldestFirst }.flatMap { $0 } }

    /// The first broken invariant of a shard's storage, or `nil` if they are all consistent.
    var storageInvariantViolation: String? {
        eachShard { $0.storage.invariantViolation() }.compactMap { $0 }.first
    }
}

extension MemoryCacheStatistics {
    /// Adds another shard's counters to these.
    mutating func add(_ other: MemoryCacheStatistics) {
        hits += other.hits
        misses += other.misses
        evictions += other.evictions
        expirations += other.expirations
        insertions += other.insertions
        notAdmitted += other.notAdmitted
    }
}
