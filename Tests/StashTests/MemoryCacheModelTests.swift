import Testing

@testable import Stash

/// Runs seeded random operations against a ``MemoryCache`` and a deliberately naive reference
/// model, under each eviction policy, comparing results, totals, eviction order, statistics and
/// eviction reports after every step.
@Suite struct MemoryCacheModelTests {
    /// The obvious, slow implementation: a dictionary of values, and the policy's order kept in
    /// arrays by ``MemoryReferencePolicy``.
    private struct Model {
        struct Stored {
            var value: Int
            var expiry: ContinuousClock.Instant?
        }

        var order: MemoryReferencePolicy<Int>
        var stored: [Int: Stored] = [:]
        var costLimit: Int
        var countLimit: Int
        let ratio: Double
        let defaultTimeToLive: Duration?
        var statistics = MemoryCacheStatistics()
        var evictions: [EvictionLog<Int, Int>.Entry] = []

        /// The whole cache's cost limit when this models one shard of it.
        var cacheCostLimit: Int?

        var totalCost: Int { order.totalCost }
        var count: Int { order.count }
        var entryCostLimit: Int { min(costLimit, Int(Double(cacheCostLimit ?? costLimit) * ratio)) }
        var keysInEvictionOrder: [Int] { order.keysInEvictionOrder }

        mutating func take() -> [EvictionLog<Int, Int>.Entry] {
            defer { evictions = [] }
            return evictions
        }

        /// Whether a live entry is stored for `key`, removing it (as an expiration) if it has
        /// expired.
        mutating func find(_ key: Int, now: ContinuousClock.Instant) -> Bool {
            guard let entry = stored[key] else { return false }
            if let expiry = entry.expiry, now >= expiry {
                remove(key)
                evictions.append(.init(key: key, value: entry.value, reason: .expired))
                statistics.expirations += 1
                return false
            }
            return true
        }

        @discardableResult
        mutating func remove(_ key: Int) -> Int? {
            order.remove(key)
            return stored.removeValue(forKey: key)?.value
        }

        mutating func value(_ key: Int, now: ContinuousClock.Instant) -> Int? {
            guard find(key, now: now) else {
                statistics.misses += 1
                return nil
            }
            statistics.hits += 1
            order.access(key)
            return stored[key]!.value
        }

        mutating func set(_ value: Int, _ key: Int, cost: Int, timeToLive: Duration?, now: ContinuousClock.Instant) {
            let timeToLive = timeToLive ?? defaultTimeToLive
            let isAcceptable = (timeToLive.map { $0 > .zero } ?? true) && cost <= entryCostLimit && countLimit > 0
            guard isAcceptable else {
                remove(key)
                return
            }
            let entry = Stored(value: value, expiry: timeToLive.map { now + $0 })
            statistics.insertions += 1
            // An entry still stored, even an expired one, is replaced in place: an access.
            if stored[key] != nil {
                order.access(key, newCost: cost)
                stored[key] = entry
                evict(toCost: costLimit, count: countLimit, reason: .limit)
            } else {
                record(order.insert(key, cost: cost, costLimit: costLimit, countLimit: countLimit), reason: .limit)
                stored[key] = entry
            }
        }

        mutating func evict(toCost cost: Int, count: Int, reason: MemoryEvictionReason) {
            record(order.evict(toCost: cost, count: count), reason: reason)
        }

        mutating func record(_ evicted: [Int], reason: MemoryEvictionReason) {
            for key in evicted {
                evictions.append(.init(key: key, value: stored.removeValue(forKey: key)!.value, reason: reason))
                statistics.evictions += 1
            }
        }

        mutating func removeAll(reason: MemoryEvictionReason) {
            for key in keysInEvictionOrder {
                evictions.append(.init(key: key, value: stored[key]!.value, reason: reason))
            }
            if reason == .memoryPressure { statistics.evictions += count }
            order.removeAll()
            stored = [:]
        }

        mutating func removeExpired(now: ContinuousClock.Instant) {
            for key in keysInEvictionOrder { _ = find(key, now: now) }
        }
    }

    /// A sharded cache: one ``Model`` per shard, each with the shard's part of the limits, fed
    /// the keys that the cache sends to that shard; the bulk operations split their targets as
    /// the cache does.
    private struct ShardedModel {
        var shards: [Model]
        let shardIndex: (Int) -> Int
        var costLimit: Int
        var countLimit: Int

        init(_ model: Model, shards count: Int, shardIndex: @escaping (Int) -> Int) {
            self.shardIndex = shardIndex
            costLimit = model.costLimit
            countLimit = model.countLimit
            shards = (0..<count).map { index in
                var shard = model
                shard.costLimit = MemoryCache<Int, Int>.share(of: model.costLimit, shard: index, of: count)
                shard.countLimit = MemoryCache<Int, Int>.share(of: model.countLimit, shard: index, of: count)
                shard.cacheCostLimit = model.costLimit
                return shard
            }
        }

        var totalCost: Int { shards.map(\.totalCost).reduce(0, +) }
        var count: Int { shards.map(\.count).reduce(0, +) }
        var keysInEvictionOrder: [Int] { shards.flatMap(\.keysInEvictionOrder) }
        var ghosts: [Int] { shards.flatMap { $0.order.ghosts.map(\.hashValue) } }
        var statistics: MemoryCacheStatistics {
            shards.reduce(into: MemoryCacheStatistics()) { sum, shard in sum.add(shard.statistics) }
        }

        mutating func take() -> [EvictionLog<Int, Int>.Entry] {
            shards.indices.flatMap { shards[$0].take() }
        }

        mutating func find(_ key: Int, now: ContinuousClock.Instant) -> Bool {
            shards[shardIndex(key)].find(key, now: now)
        }

        mutating func remove(_ key: Int) -> Int? { shards[shardIndex(key)].remove(key) }

        mutating func value(_ key: Int, now: ContinuousClock.Instant) -> Int? {
            shards[shardIndex(key)].value(key, now: now)
        }

        mutating func set(_ value: Int, _ key: Int, cost: Int, timeToLive: Duration?, now: ContinuousClock.Instant) {
            shards[shardIndex(key)].set(value, key, cost: cost, timeToLive: timeToLive, now: now)
        }

        mutating func trim(toCost cost: Int?, count: Int?) {
            let costs = cost.map { MemoryCache<Int, Int>.proportionalShares(of: $0, among: shards.map(\.totalCost)) }
            let counts = count.map { MemoryCache<Int, Int>.proportionalShares(of: $0, among: shards.map(\.count)) }
            for index in shards.indices {
                shards[index].evict(
                    toCost: costs?[index] ?? .max, count: counts?[index] ?? .max,
                    reason: cost != nil && count != nil ? .memoryPressure : .trimmed)
            }
        }

        mutating func setCostLimit(_ limit: Int) {
            costLimit = limit
            for index in shards.indices {
                shards[index].costLimit = MemoryCache<Int, Int>.share(of: limit, shard: index, of: shards.count)
                shards[index].cacheCostLimit = limit
                shards[index].evict(toCost: shards[index].costLimit, count: shards[index].countLimit, reason: .limit)
            }
        }

        mutating func setCountLimit(_ limit: Int) {
            countLimit = limit
            for index in shards.indices {
                shards[index].countLimit = MemoryCache<Int, Int>.share(of: limit, shard: index, of: shards.count)
                shards[index].evict(toCost: shards[index].costLimit, count: shards[index].countLimit, reason: .limit)
            }
        }

        mutating func removeAll(reason: MemoryEvictionReason) {
            for index in shards.indices { shards[index].removeAll(reason: reason) }
        }

        mutating func removeExpired(now: ContinuousClock.Instant) {
            for index in shards.indices { shards[index].removeExpired(now: now) }
        }
    }

    @Test(arguments: MemoryEvictionPolicy.all, [1, 2, 3, 42, 2_024, 65_537] as [UInt64])
    func matchesTheReferenceModelAfterEveryStep(policy: MemoryEvictionPolicy, seed: UInt64) throws {
        try compareWithTheModel(policy: policy, seed: seed, shards: 1)
    }

    /// With shards on, each shard is compared with a model of its own: the policy decides
    /// within a shard, on the shard's part of the limits.
    @Test(arguments: MemoryEvictionPolicy.all, [1, 2, 42, 65_537] as [UInt64])
    func eachShardMatchesTheReferenceModelAfterEveryStep(policy: MemoryEvictionPolicy, seed: UInt64) throws {
        try compareWithTheModel(policy: policy, seed: seed, shards: 4)
    }

    private func compareWithTheModel(policy: MemoryEvictionPolicy, seed: UInt64, shards: Int) throws {
        var random = SplitMix64(seed: seed)
        let clock = ManualClock()
        let ratio = [0.1, 0.25, 0.5, 1][Int.random(in: 0..<4, using: &random)]
        let defaultTimeToLive: Duration? = Bool.random(using: &random) ? .seconds(4) : nil
        // Limits four times as large with four shards, so that each shard is as crowded.
        let one = Model(
            order: MemoryReferencePolicy(policy), costLimit: shards * Int.random(in: 20...80, using: &random),
            countLimit: shards * Int.random(in: 4...20, using: &random),
            ratio: ratio, defaultTimeToLive: defaultTimeToLive)
        let cache = MemoryCache<Int, Int>(
            costLimit: one.costLimit, countLimit: one.countLimit, defaultTimeToLive: defaultTimeToLive,
            entryCostLimitRatio: ratio, policy: policy, shards: shards, clock: clock.now)
        var model = ShardedModel(one, shards: shards, shardIndex: cache.shardIndex(forKey:))
        let log = EvictionLog<Int, Int>()
        cache.onEviction = log.callback

        for step in 0..<4_000 {
            let key = Int.random(in: 0..<(24 * shards), using: &random)
            let now = clock.now()
            let operation: String
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:
                operation = "value(forKey: \(key))"
                try #require(cache.value(forKey: key) == model.value(key, now: now), "step \(step): \(operation)")
            case 35..<65:
                let cost = Int.random(in: 0...12, using: &random)
                let timeToLive: Duration? = [nil, nil, .zero, .seconds(1), .seconds(3), .seconds(10)]
                    .randomElement(using: &random)!
                operation =
                    "setValue(\(step), forKey: \(key), cost: \(cost), timeToLive: \(String(describing: timeToLive)))"
                cache.setValue(step, forKey: key, cost: cost, timeToLive: timeToLive)
                model.set(step, key, cost: cost, timeToLive: timeToLive, now: now)
            case 65..<75:
                operation = "removeValue(forKey: \(key))"
                let expected = model.find(key, now: now) ? model.remove(key) : nil
                try #require(cache.removeValue(forKey: key) == expected, "step \(step): \(operation)")
            case 75..<80:
                operation = "containsValue(forKey: \(key))"
                try #require(cache.containsValue(forKey: key) == model.find(key, now: now))
            case 80..<88:
                let seconds = Int.random(in: 0...2, using: &random)
                operation = "advance(by: \(seconds)s)"
                clock.advance(by: .seconds(seconds))
            case 88..<90:
                let cost = shards * Int.random(in: 0...60, using: &random)
                operation = "trim(toCost: \(cost))"
                cache.trim(toCost: cost)
                model.trim(toCost: cost, count: nil)
            case 90..<92:
                let count = shards * Int.random(in: 0...15, using: &random)
                operation = "trim(toCount: \(count))"
                cache.trim(toCount: count)
                model.trim(toCost: nil, count: count)
            case 92..<94:
                let limit = shards * Int.random(in: 0...80, using: &random)
                operation = "costLimit = \(limit)"
                cache.costLimit = limit
                model.setCostLimit(limit)
            case 94..<96:
                let limit = shards * Int.random(in: 0...20, using: &random)
                operation = "countLimit = \(limit)"
                cache.countLimit = limit
                model.setCountLimit(limit)
            case 96:
                operation = "handleMemoryPressure(.warning)"
                cache.handleMemoryPressure(.warning)
                model.trim(toCost: model.totalCost / 2, count: model.count / 2)
            case 97:
                let isCritical = Int.random(in: 0..<4, using: &random) == 0
                operation = isCritical ? "handleMemoryPressure(.critical)" : "removeAll()"
                if isCritical { cache.handleMemoryPressure(.critical) } else { cache.removeAll() }
                model.removeAll(reason: isCritical ? .memoryPressure : .removedAll)
            default:
                operation = "removeExpiredValues()"
                cache.removeExpiredValues()
                model.removeExpired(now: now)
            }

            let context: Comment = "step \(step) of seed \(seed) under \(policy), \(shards) shards: \(operation)"
            try #require(cache.keysInEvictionOrder == model.keysInEvictionOrder, context)
            try #require(cache.ghostFingerprints == model.ghosts, context)
            try #require(cache.costLimit == model.costLimit && cache.countLimit == model.countLimit, context)
            try #require(cache.totalCost == model.totalCost, context)
            try #require(cache.totalCount == model.count, context)
            try #require(cache.statistics == model.statistics, context)
            try #require(log.take() == model.take(), context)
            try #require(cache.storageInvariantViolation == nil, context)
        }
        // The run must have exercised every kind of removal, or the comparison proves little.
        let statistics = cache.statistics
        #expect(statistics.evictions > 0 && statistics.hits > 0 && statistics.insertions > 0)
        #expect(defaultTimeToLive == nil || statistics.expirations > 0)
    }
}
