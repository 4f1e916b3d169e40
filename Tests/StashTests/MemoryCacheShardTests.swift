import Foundation
import Testing

@testable import Stash

/// A sharded ``MemoryCache`` under many threads: limits after every operation, statistics that
/// add up, memory pressure, and how many shards a cache gets.
@Suite struct MemoryCacheShardTests {
    static let policies: [MemoryEvictionPolicy] = MemoryEvictionPolicy.all + [.adaptive]

    /// Runs `body(thread)` on `threads` threads of their own (not the cooperative pool, which
    /// has one thread per core), started together, and waits for them all.
    private func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            done.enter()
            Thread {
                start.wait()
                body(thread)
                done.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
    }

    @Test(arguments: policies)
    func limitsHoldAfterEveryOperationUnderEightWriterThreads(policy: MemoryEvictionPolicy) {
        let costLimit = 4_000
        let countLimit = 600
        let cache = MemoryCache<Int, Int>(
            costLimit: costLimit, countLimit: countLimit, entryCostLimitRatio: 0.1, policy: policy, shards: 8,
            cost: { $0 % 50 + 1 })
        #expect(cache.shardCount == 8)
        let violations = LockedValue<[String]>([])
        let counts = LockedValue((lookups: 0, insertions: 0))
        onThreads(8) { thread in
            var random = SplitMix64(seed: UInt64(thread + 1))
            var lookups = 0
            var insertions = 0
            for step in 0..<6_000 {
                let key = Int.random(in: 0..<2_000, using: &random)
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<40:
                    lookups += 1
                    if let value = cache.value(forKey: key), value != key {
                        violations.withLock { $0.append("\(key) read as \(value)") }
                    }
                case 40..<90:
                    insertions += 1
                    cache.setValue(key, forKey: key)
                case 90..<97:
                    cache.removeValue(forKey: key)
                case 97:
                    cache.trim(toCost: costLimit / 2)
                case 98:
                    cache.handleMemoryPressure(.warning)
                default:
                    cache.trim(toCount: countLimit / 2)
                }
                // Each shard is within its part of the limits whenever its lock is free, so the
                // sum read one shard after another is within the limits too.
                let (cost, count) = (cache.totalCost, cache.totalCount)
                if cost > costLimit || count > countLimit {
                    violations.withLock { $0.append("step \(step) of thread \(thread): cost \(cost), count \(count)") }
                }
            }
            counts.withLock {
                $0.lookups += lookups
                $0.insertions += insertions
            }
        }
        #expect(violations.withLock { $0 } == [])
        #expect(cache.storageInvariantViolation == nil)
        let statistics = cache.statistics
        #expect(statistics.hits + statistics.misses == counts.withLock { $0.lookups })
        #expect(statistics.insertions == counts.withLock { $0.insertions })
        #expect(statistics.hits > 0 && statistics.evictions > 0)
        let keys = cache.keysInEvictionOrder
        #expect(keys.count == cache.totalCount && Set(keys).count == keys.count)
        #expect(cache.totalCost == keys.reduce(0) { $0 + $1 % 50 + 1 })
        for key in keys { #expect(cache.shardIndex(forKey: key) < 8) }
    }

    @Test(arguments: policies)
    func hitsOnManyThreadsAreAllCountedAndFindTheirValues(policy: MemoryEvictionPolicy) {
        let cache = MemoryCache<Int, [Int]>(countLimit: 8_192, policy: policy, shards: 8)
        for key in 0..<4_000 { cache.setValue([key], forKey: key) }
        #expect(cache.totalCount == 4_000)
        let wrong = LockedValue(0)
        onThreads(4) { thread in
            var random = SplitMix64(seed: UInt64(thread + 11))
            for _ in 0..<20_000 {
                let key = Int.random(in: 0..<4_000, using: &random)
                if cache.value(forKey: key) != [key] { wrong.withLock { $0 += 1 } }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
        #expect(cache.statistics.hits == 80_000 && cache.statistics.misses == 0)
        // The buffered hits are replayed before the order is read: every entry is still there.
        #expect(Set(cache.keysInEvictionOrder) == Set(0..<4_000))
        #expect(cache.storageInvariantViolation == nil)
    }

    @Test(arguments: policies)
    func memoryPressureHalvesAShardedCacheThenEmptiesIt(policy: MemoryEvictionPolicy) {
        let cache = MemoryCache<Int, Int>(countLimit: 10_000, policy: policy, shards: 8, cost: { _ in 3 })
        for key in 0..<1_000 { cache.setValue(key, forKey: key) }
        let log = EvictionLog<Int, Int>()
        cache.onEviction = log.callback
        cache.handleMemoryPressure(.warning)
        // Half of the cost and half of the count, split among the shards by what each holds;
        // a shard whose part of the cost is not a whole number of these entries of 3 keeps one
        // entry fewer than its part of the count, so at most one per shard more goes.
        let kept = cache.totalCount
        #expect(kept <= 500 && kept >= 500 - 8)
        #expect(cache.totalCost == 3 * kept)
        let evicted = log.take()
        #expect(evicted.count == 1_000 - kept && evicted.allSatisfy { $0.reason == .memoryPressure })
        #expect(cache.statistics.evictions == 1_000 - kept)
        cache.handleMemoryPressure(.critical)
        #expect(cache.totalCount == 0 && cache.totalCost == 0)
        #expect(log.take().count == kept)
        #expect(cache.statistics.evictions == 1_000)
    }

    @Test func aLargeCacheIsShardedAndASmallOneIsNot() {
        let processors = ProcessInfo.processInfo.activeProcessorCount
        let expected = min(8, max(1, 1 << (Int.bitWidth - 1 - (4 * processors).leadingZeroBitCount)))
        #expect(MemoryCache<Int, Int>().shardCount == expected)
        #expect(MemoryCache<Int, Int>(countLimit: 1_000).shardCount == 1)
        #expect(MemoryCache<Int, Int>(costLimit: 1_000).shardCount == 1)
        #expect(MemoryCache<Int, Int>(entryCostLimitRatio: 1).shardCount == 1)
        #expect(MemoryCache<Int, Int>(entryCostLimitRatio: 0.25).shardCount == min(expected, 4))
        #expect(MemoryCache<Int, Int>(countLimit: 4_096).shardCount == min(expected, 4))
        #expect(MemoryCache<Int, Int>(countLimit: 1_000_000, shards: 32).shardCount == 32)
        #expect(MemoryCache<Int, Int>(countLimit: 1_000_003, shards: 4).countLimit == 1_000_003)
        #expect(MemoryCache<Int, Int>(costLimit: 1_000_003, shards: 4).costLimit == 1_000_003)
    }

    @Test func anEntryLargerThanItsShardsPartIsNotKept() {
        // Four shards of 250: the ratio allows 500, the shard only 250.
        let cache = MemoryCache<String, Int>(costLimit: 1_000, entryCostLimitRatio: 0.5, shards: 4)
        cache.setValue(1, forKey: "large", cost: 251)
        #expect(cache["large"] == nil && cache.totalCount == 0)
        cache.setValue(1, forKey: "fits", cost: 250)
        #expect(cache["fits"] == 1 && cache.totalCost == 250)
    }
}
