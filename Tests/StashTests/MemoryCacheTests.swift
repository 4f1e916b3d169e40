import Testing

@testable import Stash

@Suite struct MemoryCacheTests {
    private func makeCache(
        policy: MemoryEvictionPolicy? = nil, costLimit: Int = 1_000, countLimit: Int = .max,
        defaultTimeToLive: Duration? = nil, entryCostLimitRatio: Double = 1, clock: ManualClock = ManualClock()
    ) -> (MemoryCache<String, Int>, EvictionLog<String, Int>) {
        // Without a policy: the default one.
        let cache =
            if let policy {
                MemoryCache<String, Int>(
                    costLimit: costLimit, countLimit: countLimit, defaultTimeToLive: defaultTimeToLive,
                    entryCostLimitRatio: entryCostLimitRatio, policy: policy, clock: clock.now)
            } else {
                MemoryCache<String, Int>(
                    costLimit: costLimit, countLimit: countLimit, defaultTimeToLive: defaultTimeToLive,
                    entryCostLimitRatio: entryCostLimitRatio, clock: clock.now)
            }
        let log = EvictionLog<String, Int>()
        cache.onEviction = log.callback
        return (cache, log)
    }

    // MARK: - Limits and order

    @Test func evictsLeastRecentlyUsedEntryWhenOverCountLimit() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed, countLimit: 3)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        #expect(cache["a"] == 1)  // "b" is now the least recently used
        cache["d"] = 4

        #expect(cache.keysInEvictionOrder == ["c", "a", "d"])
        #expect(cache["b"] == nil)
        #expect(cache.totalCount == 3)
        #expect(log.take() == [.init(key: "b", value: 2, reason: .limit)])
    }

    @Test func evictsLeastRecentlyUsedEntriesUntilUnderCostLimit() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed, costLimit: 10)
        cache.setValue(1, forKey: "a", cost: 4)
        cache.setValue(2, forKey: "b", cost: 4)
        cache.setValue(3, forKey: "c", cost: 2)
        cache.setValue(4, forKey: "d", cost: 9)

        #expect(cache.keysInEvictionOrder == ["d"])
        #expect(cache.totalCost == 9)
        #expect(log.take().map(\.key) == ["a", "b", "c"])
    }

    @Test func refusesEntryCostingMoreThanEntryCostLimitRatioAndDropsTheOldValue() {
        let (cache, log) = makeCache(costLimit: 100, entryCostLimitRatio: 0.1)
        cache.setValue(1, forKey: "fits", cost: 10)
        cache.setValue(2, forKey: "big", cost: 11)
        #expect(cache["fits"] == 1)
        #expect(cache["big"] == nil)

        cache.setValue(3, forKey: "fits", cost: 11)  // a refused update must not leave the old value behind
        #expect(cache["fits"] == nil)
        #expect(cache.totalCost == 0)
        #expect(cache.statistics.insertions == 1)
        #expect(log.take().isEmpty)
    }

    @Test func replacingAValueUpdatesItsCostAndMakesItMostRecentlyUsed() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed, costLimit: 10)
        cache.setValue(1, forKey: "a", cost: 3)
        cache.setValue(2, forKey: "b", cost: 3)
        cache.setValue(10, forKey: "a", cost: 5)

        #expect(cache.keysInEvictionOrder == ["b", "a"])
        #expect(cache.totalCost == 8)
        #expect(cache["a"] == 10)
        #expect(log.take().isEmpty)
    }

    @Test func usesTheCostFunctionAndOtherwiseCostsOnePerEntry() {
        let sized = MemoryCache<String, [UInt8]>(costLimit: 100, cost: { $0.count })
        sized["a"] = [1, 2, 3]
        sized.setValue([1], forKey: "b", cost: 7)
        #expect(sized.totalCost == 10)

        let unsized = MemoryCache<String, Int>(costLimit: 100)
        unsized["a"] = 1
        unsized["b"] = 2
        #expect(unsized.totalCost == 2)
    }

    @Test func keepsNothingWhenCountLimitIsZero() {
        let (cache, _) = makeCache(countLimit: 0)
        cache["a"] = 1
        #expect(cache["a"] == nil)
        #expect(cache.totalCount == 0)
    }

    @Test func trimsToCostAndToCountLeastRecentlyUsedFirst() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed)
        for (index, key) in ["a", "b", "c", "d", "e"].enumerated() { cache.setValue(index, forKey: key, cost: 2) }

        cache.trim(toCost: 7)
        #expect(cache.keysInEvictionOrder == ["c", "d", "e"])
        #expect(cache.totalCost == 6)

        cache.trim(toCount: 1)
        #expect(cache.keysInEvictionOrder == ["e"])
        #expect(log.take().map(\.reason) == Array(repeating: .trimmed, count: 4))
        #expect(cache.statistics.evictions == 4)
    }

    @Test func loweringLimitsAtRuntimeEvictsDownToThem() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed, costLimit: 100, entryCostLimitRatio: 0.5)
        for (index, key) in ["a", "b", "c", "d"].enumerated() { cache.setValue(index, forKey: key, cost: 10) }

        cache.costLimit = 30
        #expect(cache.keysInEvictionOrder == ["b", "c", "d"])
        cache.countLimit = 2
        #expect(cache.keysInEvictionOrder == ["c", "d"])
        #expect(log.take() == [.init(key: "a", value: 0, reason: .limit), .init(key: "b", value: 1, reason: .limit)])

        cache.setValue(9, forKey: "e", cost: 16)  // over the new per-entry limit of 15
        #expect(cache["e"] == nil)
        #expect((cache.costLimit, cache.countLimit) == (30, 2))
    }

    @Test func removeValueReturnsTheValueWithoutReportingAnEviction() {
        let (cache, log) = makeCache()
        cache["a"] = 1
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        cache["b"] = 2
        cache["b"] = nil
        #expect(cache.totalCount == 0)
        #expect(log.take().isEmpty)
    }

    @Test func containsValueChangesNeitherOrderNorStatistics() {
        let (cache, _) = makeCache()
        cache["a"] = 1
        cache["b"] = 2
        #expect(cache.containsValue(forKey: "a"))
        #expect(!cache.containsValue(forKey: "z"))
        #expect(cache.keysInEvictionOrder == ["a", "b"])
        #expect(cache.statistics == MemoryCacheStatistics(insertions: 2))
    }

    @Test func removeAllReportsEveryEntryLeastRecentlyUsedFirst() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed)
        cache["a"] = 1
        cache["b"] = 2
        _ = cache["a"]
        cache.removeAll()

        #expect(cache.totalCount == 0)
        #expect(cache.totalCost == 0)
        #expect(
            log.take() == [
                .init(key: "b", value: 2, reason: .removedAll), .init(key: "a", value: 1, reason: .removedAll),
            ])
        #expect(cache.statistics.evictions == 0)
        cache["c"] = 3  // the emptied storage is usable
        #expect(cache.keysInEvictionOrder == ["c"])
    }

    // MARK: - Expiry

    @Test func servesAnEntryUntilItsTimeToLiveHasPassed() {
        let clock = ManualClock()
        let (cache, log) = makeCache(defaultTimeToLive: .seconds(10), clock: clock)
        cache["a"] = 1
        cache.setValue(2, forKey: "long", timeToLive: .seconds(60))

        clock.advance(by: .seconds(9))
        #expect(cache["a"] == 1)
        clock.advance(by: .seconds(1))
        #expect(cache["a"] == nil)
        #expect(cache["long"] == 2)
        #expect(cache.totalCount == 1)
        #expect(log.take() == [.init(key: "a", value: 1, reason: .expired)])
        #expect(cache.statistics == MemoryCacheStatistics(hits: 2, misses: 1, expirations: 1, insertions: 2))
    }

    @Test func expiredEntriesCountUntilSweptAndAreNeverReturned() {
        let clock = ManualClock()
        let (cache, log) = makeCache(clock: clock)
        cache.setValue(1, forKey: "a", timeToLive: .seconds(1))
        cache.setValue(2, forKey: "b", timeToLive: .seconds(5))
        cache.setValue(3, forKey: "c", timeToLive: .seconds(1))
        clock.advance(by: .seconds(2))

        #expect(cache.totalCount == 3)
        #expect(!cache.containsValue(forKey: "a"))
        #expect(cache.removeValue(forKey: "c") == nil)
        #expect(cache.totalCount == 1)
        cache.setValue(4, forKey: "d", timeToLive: .seconds(1))
        clock.advance(by: .seconds(1))
        cache.removeExpiredValues()

        #expect(cache.keysInEvictionOrder == ["b"])
        #expect(log.take().map(\.key) == ["a", "c", "d"])
        #expect(cache.statistics.expirations == 3)
    }

    @Test func readsTheClockOnlyForEntriesThatCanExpire() {
        let clock = ManualClock()
        let (cache, log) = makeCache(clock: clock)
        cache["a"] = 1
        cache.setValue(2, forKey: "b", timeToLive: .seconds(1))
        let reads = clock.reads

        #expect(cache["a"] == 1)
        #expect(cache.containsValue(forKey: "a"))
        #expect(cache["missing"] == nil)
        #expect(clock.reads == reads)
        #expect(cache["b"] == 2)
        #expect(clock.reads == reads + 1)
        clock.advance(by: .seconds(1))
        #expect(cache["b"] == nil)
        #expect(log.take() == [.init(key: "b", value: 2, reason: .expired)])
        #expect(cache.statistics == MemoryCacheStatistics(hits: 2, misses: 2, expirations: 1, insertions: 2))
    }

    @Test func storesNothingForATimeToLiveThatIsNotPositive() {
        let (cache, _) = makeCache()
        cache["a"] = 1
        cache.setValue(2, forKey: "a", timeToLive: .zero)
        #expect(cache["a"] == nil)
        #expect(cache.totalCount == 0)
    }

    // MARK: - Statistics, callbacks and memory pressure

    @Test func countsHitsMissesEvictionsExpirationsAndInsertions() {
        let clock = ManualClock()
        let (cache, _) = makeCache(countLimit: 2, clock: clock)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3  // evicts "a"
        _ = cache["a"]
        _ = cache["b"]
        _ = cache["c"]
        cache.setValue(4, forKey: "d", timeToLive: .seconds(1))  // evicts "b"
        clock.advance(by: .seconds(1))
        _ = cache["d"]

        let statistics = cache.statistics
        #expect(statistics == MemoryCacheStatistics(hits: 2, misses: 2, evictions: 2, expirations: 1, insertions: 4))
        #expect(statistics.hitRatio == 0.5)
    }

    @Test func callsTheEvictionCallbackOutsideTheLock() {
        let cache = MemoryCache<String, Int>(countLimit: 1)
        let seenCounts = LockedValue<[Int]>([])
        cache.onEviction = { _, _, _ in
            // Re-entering the cache would deadlock if the callback ran under its lock.
            seenCounts.withLock { $0.append(cache.totalCount) }
        }
        cache["a"] = 1
        cache["b"] = 2
        cache.onEviction = nil  // break the cycle cache → callback → cache
        #expect(seenCounts.withLock { $0 } == [1])
    }

    @Test func halvesOnMemoryPressureWarningAndEmptiesWhenCritical() {
        let (cache, log) = makeCache(policy: .leastRecentlyUsed)
        for index in 0..<10 { cache.setValue(index, forKey: "k\(index)", cost: 3) }

        cache.handleMemoryPressure(.normal)
        #expect(cache.totalCount == 10)
        cache.handleMemoryPressure(.warning)
        #expect(cache.totalCount == 5)
        #expect(cache.totalCost == 15)
        #expect(cache.keysInEvictionOrder == ["k5", "k6", "k7", "k8", "k9"])
        cache.handleMemoryPressure(.critical)
        #expect(cache.totalCount == 0)
        #expect(cache.totalCost == 0)

        let reported = log.take()
        #expect(reported.count == 10)
        #expect(reported.allSatisfy { $0.reason == .memoryPressure })
        #expect(cache.statistics.evictions == 10)
    }

    @Test func storageStaysConsistentAfterSlotsAreReused() {
        let (cache, _) = makeCache(countLimit: 4)
        for round in 0..<50 {
            cache["k\(round % 7)"] = round
            if round % 3 == 0 { cache["k\((round + 2) % 7)"] = nil }
            #expect(cache.storageInvariantViolation == nil)
        }
    }

    // MARK: - Concurrency

    private struct Payload: Hashable, Sendable {
        var key: Int
        var writer: Int
        var serial: Int
    }

    @Test func concurrentOperationsNeverMixUpValuesAndKeepTotalsConsistent() async {
        let clock = ManualClock()
        let cache = MemoryCache<Int, Payload>(
            costLimit: 200, countLimit: 48, defaultTimeToLive: .seconds(20), cost: { $0.key % 20 + 1 },
            clock: clock.now)
        let mixUps = LockedValue(0)
        cache.onEviction = { key, value, _ in if key != value.key { mixUps.withLock { $0 += 1 } } }

        let counts = await withTaskGroup(of: (lookups: Int, insertions: Int).self) { group in
            for writer in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(writer))
                    var lookups = 0
                    var insertions = 0
                    for serial in 0..<20_000 {
                        let key = Int.random(in: 0..<64, using: &random)
                        switch Int.random(in: 0..<100, using: &random) {
                        case 0..<50:
                            lookups += 1
                            if let value = cache[key], value.key != key { mixUps.withLock { $0 += 1 } }
                        case 50..<85:
                            insertions += 1
                            cache.setValue(Payload(key: key, writer: writer, serial: serial), forKey: key)
                        case 85..<95:
                            if let value = cache.removeValue(forKey: key), value.key != key {
                                mixUps.withLock { $0 += 1 }
                            }
                        case 95..<97: clock.advance(by: .seconds(1))
                        case 97: cache.handleMemoryPressure(.warning)
                        case 98: cache.trim(toCount: 32)
                        default: _ = cache.containsValue(forKey: key)
                        }
                    }
                    return (lookups, insertions)
                }
            }
            return await group.reduce(into: (lookups: 0, insertions: 0)) { total, counts in
                total.lookups += counts.lookups
                total.insertions += counts.insertions
            }
        }

        #expect(mixUps.withLock { $0 } == 0)
        #expect(cache.storageInvariantViolation == nil)
        let statistics = cache.statistics
        #expect(statistics.hits + statistics.misses == counts.lookups)
        #expect(statistics.insertions == counts.insertions)
        let keys = cache.keysInEvictionOrder
        #expect(cache.totalCost == keys.reduce(0) { $0 + $1 % 20 + 1 })
        #expect(cache.totalCount == keys.count)
        #expect(cache.totalCost <= 200 && cache.totalCount <= 48)
        for key in keys { #expect(cache.removeValue(forKey: key).map { $0.key == key } ?? true) }
        #expect(cache.totalCost == 0)
    }
}
