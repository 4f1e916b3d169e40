import Foundation
import Testing

@testable import Stash

/// SIEVE and S3-FIFO in the memory tier: exact behaviour on small cases, request-by-request
/// agreement with the list-based ``MemoryReferencePolicy`` on seeded traces, scan resistance, and
/// limits under every policy.
@Suite struct MemoryCachePolicyTests {
    private func makeCache(
        _ policy: MemoryEvictionPolicy, costLimit: Int = 1_000, countLimit: Int = .max,
        entryCostLimitRatio: Double = 1
    ) -> (MemoryCache<String, Int>, EvictionLog<String, Int>) {
        let cache = MemoryCache<String, Int>(
            costLimit: costLimit, countLimit: countLimit, entryCostLimitRatio: entryCostLimitRatio, policy: policy)
        let log = EvictionLog<String, Int>()
        cache.onEviction = log.callback
        return (cache, log)
    }

    // MARK: - The public surface

    @Test func defaultsToAdaptiveAndNamesPoliciesAsTheDiskTierDoes() {
        #expect(MemoryCache<String, Int>().policy == .adaptive)
        #expect(MemoryCache<String, Int>(policy: .sieve).policy == .sieve)
        #expect(MemoryEvictionPolicy.all.map(\.description) == ["lru", "sieve", "s3-fifo"])
        #expect(MemoryEvictionPolicy.all == [.leastRecentlyUsed, .sieve, .s3fifo])
        // The same names as the disk tier's policies, which has more of them (fifo, tinylfu).
        #expect(
            Set(MemoryEvictionPolicy.all.map(\.description)).isSubset(of: EvictionPolicy.all.map(\.description)))
    }

    @Test func policyBitsFitInTheNodesPadding() {
        #expect(MemoryLayout<MemoryCache<String, Int>.Node>.stride == 32)
    }

    /// A hit reads one item: the key (with its hash), the value and the policy bits together;
    /// the links of a slot take 8 bytes, apart.
    @Test func anItemHoldsKeyValueAndMarkAndTheLinksTakeEightBytes() {
        // HashedKey<Int> (16) + Data (16) + Mark (3), padded to 8.
        #expect(MemoryLayout<MemoryCache<Int, Data>.Item>.stride == 40)
        #expect(MemoryLayout<MemoryCache<Int, Data>.Mark>.size == 3)
        #expect(MemoryLayout<MemoryCache<Int, Data>.Link>.stride == 8)
    }

    // MARK: - SIEVE

    @Test func sieveHitSetsTheVisitedBitWithoutMovingTheEntry() {
        let (cache, log) = makeCache(.sieve, countLimit: 3)
        cache["a"] = 1
        cache["b"] = 2
        cache["c"] = 3
        #expect(cache["a"] == 1)
        #expect(cache.keysInEvictionOrder == ["a", "b", "c"])

        cache["d"] = 4  // the hand clears "a" and evicts "b", the first unvisited entry
        #expect(cache.keysInEvictionOrder == ["a", "c", "d"])
        #expect(log.take() == [.init(key: "b", value: 2, reason: .limit)])
    }

    @Test func sieveHandResumesWhereItStoppedRatherThanAtTheTail() {
        let (cache, log) = makeCache(.sieve, countLimit: 3)
        for (value, key) in ["a", "b", "c"].enumerated() { cache[key] = value }
        _ = cache["a"]
        cache["d"] = 3  // evicts "b"; the hand stops at "c"
        cache["e"] = 4  // evicts "c"; restarting at the tail would have evicted "a", now unvisited

        #expect(log.take().map(\.key) == ["b", "c"])
        #expect(cache.keysInEvictionOrder == ["a", "d", "e"])
    }

    @Test func sieveHandMovesOnWhenTheEntryItPointsAtIsRemoved() {
        let (cache, log) = makeCache(.sieve, countLimit: 3)
        for (value, key) in ["a", "b", "c"].enumerated() { cache[key] = value }
        _ = cache["a"]
        cache["d"] = 3  // evicts "b"; the hand points at "c"
        #expect(cache.removeValue(forKey: "c") == 2)  // the hand moves on to "d"
        cache["e"] = 4  // reuses the slot of "c": a hand left there would now point at "e"
        cache["f"] = 5

        #expect(log.take().map(\.key) == ["b", "d"])
        #expect(cache.keysInEvictionOrder == ["a", "e", "f"])
        #expect(cache.storageInvariantViolation == nil)
    }

    @Test func sieveHandWrapsAroundToTheTail() {
        let (cache, log) = makeCache(.sieve, countLimit: 3)
        for (value, key) in ["a", "b", "c"].enumerated() { cache[key] = value }
        for key in ["a", "b", "c"] { _ = cache[key] }
        cache["d"] = 3  // a whole lap clears every bit, then the hand wraps and evicts "a"

        #expect(log.take().map(\.key) == ["a"])
        #expect(cache.keysInEvictionOrder == ["b", "c", "d"])
    }

    // MARK: - S3-FIFO

    @Test func s3fifoMovesAnEntryReadOnceFromTheSmallToTheMainQueue() {
        let (cache, log) = makeCache(.s3fifo, countLimit: 10)
        for index in 0..<10 { cache["k\(index)"] = index }
        _ = cache["k0"]
        cache["k10"] = 10  // "k0" was read once: it moves to the main queue; "k1" was not: evicted

        #expect(log.take().map(\.key) == ["k1"])
        #expect(cache.keysInEvictionOrder == (2...10).map { "k\($0)" } + ["k0"])
        #expect(cache.ghostFingerprints == ["k1"].map(\.hashValue))
    }

    @Test func s3fifoAdmitsAKeyReturningFromTheGhostQueueToTheMainQueue() {
        let (cache, log) = makeCache(.s3fifo, countLimit: 10)
        for index in 0..<10 { cache["k\(index)"] = index }
        _ = cache["k0"]
        cache["k10"] = 10  // evicts "k1" and remembers it
        cache["k1"] = 11  // a ghost: straight to the main queue, which now holds two entries

        #expect(log.take().map(\.key) == ["k1", "k2"])
        #expect(cache.keysInEvictionOrder == (3...10).map { "k\($0)" } + ["k0", "k1"])
        #expect(cache.ghostFingerprints == ["k2"].map(\.hashValue))
    }

    @Test func s3fifoGhostQueueHoldsAsManyKeysAsTheMainQueueHoldsEntries() {
        let (cache, _) = makeCache(.s3fifo, countLimit: 10)
        for index in 0..<15 { cache["k\(index)"] = index }
        #expect(cache.ghostFingerprints == [])  // the main queue is empty

        _ = cache["k5"]
        cache["k15"] = 15  // "k5" moves to the main queue, "k6" becomes a ghost
        cache["k16"] = 16  // "k7" becomes a ghost and pushes "k6" out
        #expect(cache.ghostFingerprints == ["k7"].map(\.hashValue))

        cache.removeAll()
        #expect(cache.ghostFingerprints == [])
    }

    @Test func s3fifoMainQueueGivesAnEntryOneMoreRoundPerRead() {
        let (cache, log) = makeCache(.s3fifo, countLimit: 10)
        for index in 0..<10 { cache["k\(index)"] = index }
        for _ in 0..<3 { _ = cache["k0"] }
        _ = cache["k1"]
        cache["k10"] = 10  // both move to the main queue, counters cleared; "k2" is evicted
        _ = cache["k0"]
        _ = cache["k0"]
        _ = cache["k1"]
        // The small queue gives up all but its share, one entry; then the main queue: "k0",
        // read twice, goes round twice, "k1", read once, goes round once and is evicted first.
        cache.trim(toCount: 2)
        #expect(log.take().map(\.key) == (2...9).map { "k\($0)" } + ["k1"])
        #expect(cache.keysInEvictionOrder == ["k10", "k0"])

        cache.trim(toCount: 1)  // "k0" has spent its reads
        #expect(log.take().map(\.key) == ["k0"])
        #expect(cache.keysInEvictionOrder == ["k10"])
    }

    // MARK: - Every policy

    @Test(arguments: [MemoryEvictionPolicy.sieve, .s3fifo])
    func hitsMoveNoEntry(policy: MemoryEvictionPolicy) {
        let (cache, _) = makeCache(policy)
        for (value, key) in ["a", "b", "c", "d"].enumerated() { cache[key] = value }
        for key in ["c", "a", "d", "a", "b"] { _ = cache[key] }
        #expect(cache.keysInEvictionOrder == ["a", "b", "c", "d"])
    }

    @Test(arguments: MemoryEvictionPolicy.all)
    func replacingAValueCountsAsAnAccess(policy: MemoryEvictionPolicy) {
        let (cache, log) = makeCache(policy, countLimit: 3)
        for (value, key) in ["a", "b", "c"].enumerated() { cache[key] = value }
        cache["a"] = 10
        cache["d"] = 3

        #expect(log.take() == [.init(key: "b", value: 1, reason: .limit)])
        #expect(cache["a"] == 10)
    }

    @Test(arguments: MemoryEvictionPolicy.all)
    func keepsTheHotSetThroughAOnePassScanUnlessLeastRecentlyUsed(policy: MemoryEvictionPolicy) {
        let (cache, _) = makeCache(policy, countLimit: 100)
        let hot = (0..<20).map { "hot-\($0)" }
        for key in hot { cache[key] = 0 }
        for _ in 0..<2 { for key in hot { _ = cache[key] } }

        for index in 0..<1_000 {
            let key = "cold-\(index)"
            if cache[key] == nil { cache[key] = index }
        }

        let survivors = hot.filter { cache.containsValue(forKey: $0) }.count
        #expect(survivors == (policy == .leastRecentlyUsed ? 0 : hot.count))
        #expect(cache.totalCount == 100)
    }

    @Test(arguments: MemoryEvictionPolicy.all + [.adaptive])
    func limitsHoldAfterEveryWrite(policy: MemoryEvictionPolicy) throws {
        var random = SplitMix64(seed: 7)
        let clock = ManualClock()
        let cache = MemoryCache<Int, Int>(
            costLimit: 60, countLimit: 12, entryCostLimitRatio: 0.3, policy: policy, clock: clock.now)
        for step in 0..<5_000 {
            let key = Int.random(in: 0..<40, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40: _ = cache[key]
            case 40..<80:
                let timeToLive: Duration? =
                    Bool.random(using: &random) ? nil : .seconds(Int.random(in: 1...3, using: &random))
                cache.setValue(step, forKey: key, cost: Int.random(in: 0...20, using: &random), timeToLive: timeToLive)
            case 80..<88: cache.removeValue(forKey: key)
            case 88..<92: clock.advance(by: .seconds(1))
            case 92..<94: cache.costLimit = Int.random(in: 10...80, using: &random)
            case 94..<96: cache.countLimit = Int.random(in: 1...16, using: &random)
            case 96..<98: cache.trim(toCost: Int.random(in: 0...40, using: &random))
            default: cache.handleMemoryPressure(.warning)
            }
            let context: Comment = "step \(step) under \(policy)"
            try #require(cache.totalCost <= cache.costLimit, context)
            try #require(cache.totalCount <= cache.countLimit, context)
            try #require(cache.storageInvariantViolation == nil, context)
        }
        #expect(cache.statistics.evictions > 0)
    }

    // MARK: - Request by request against the reference

    /// A seeded trace: keys skewed towards small numbers, and now and then a one-pass scan of
    /// keys never requested before or after.
    private static func trace(seed: UInt64, length: Int, capacity: Int) -> [Int] {
        var random = SplitMix64(seed: seed)
        let universe = 4 * capacity + 8
        var nextScanKey = universe
        var requests: [Int] = []
        while requests.count < length {
            if Int.random(in: 0..<100, using: &random) == 0 {
                let scanLength = Int.random(in: capacity / 2...2 * capacity + 4, using: &random)
                requests += nextScanKey..<nextScanKey + scanLength
                nextScanKey += scanLength
            } else {
                let uniform = Double.random(in: 0..<1, using: &random)
                requests.append(Int(uniform * uniform * uniform * Double(universe)))
            }
        }
        return Array(requests.prefix(length))
    }

    /// Replays `requests` on a cache and on the reference as a read-through cache would.
    ///
    /// A miss stores the value; with `replacesOnHit`, now and then a hit replaces the value
    /// with a new cost. After every request the hits, the evictions and the cached keys must
    /// agree.
    private func replay(
        _ requests: [Int], policy: MemoryEvictionPolicy, costLimit: Int, countLimit: Int, entryCostLimitRatio: Double,
        cost: (Int) -> Int, replacesOnHit: Bool, context: String
    ) throws -> (hits: Int, evictions: Int) {
        let cache = MemoryCache<Int, Int>(
            costLimit: costLimit, countLimit: countLimit, entryCostLimitRatio: entryCostLimitRatio, policy: policy)
        let log = EvictionLog<Int, Int>()
        cache.onEviction = log.callback
        var reference = MemoryReferencePolicy<Int>(policy)
        let entryCostLimit = costLimit == .max ? .max : Int(Double(costLimit) * entryCostLimitRatio)
        var hits = 0
        var evictions = 0

        /// Stores in both; returns the keys the reference evicted.
        func store(_ key: Int, cost: Int, replacing: Bool) -> [Int] {
            cache.setValue(key, forKey: key, cost: cost)
            if cost > entryCostLimit {
                reference.remove(key)
                return []
            }
            if replacing {
                reference.access(key, newCost: cost)
                return reference.evict(toCost: costLimit, count: countLimit)
            }
            return reference.insert(key, cost: cost, costLimit: costLimit, countLimit: countLimit)
        }

        for (step, key) in requests.enumerated() {
            let comment: Comment = "request \(step) for \(key), \(context), under \(policy)"
            let isHit = cache[key] != nil
            try #require(isHit == reference.contains(key), comment)
            var evicted: [Int] = []
            if isHit {
                hits += 1
                reference.access(key)
                if replacesOnHit && step % 7 == 0 { evicted = store(key, cost: cost(key + step), replacing: true) }
            } else {
                evicted = store(key, cost: cost(key), replacing: false)
            }
            evictions += evicted.count
            try #require(log.take().map(\.key) == evicted, comment)
            try #require(Set(cache.keysInEvictionOrder) == reference.keys, comment)
        }
        try #require(cache.storageInvariantViolation == nil)
        return (hits, evictions)
    }

    @Test(arguments: MemoryEvictionPolicy.all, [3, 20, 100])
    func agreesWithTheReferenceOnEveryRequest(policy: MemoryEvictionPolicy, capacity: Int) throws {
        for seed in 1...2 as ClosedRange<UInt64> {
            let requests = Self.trace(seed: seed, length: 3_000, capacity: capacity)
            for isCountLimited in [false, true] {
                let outcome = try replay(
                    requests, policy: policy, costLimit: isCountLimited ? .max : capacity,
                    countLimit: isCountLimited ? capacity : .max, entryCostLimitRatio: 1, cost: { _ in 1 },
                    replacesOnHit: false,
                    context: "seed \(seed), \(isCountLimited ? "count" : "cost") limit \(capacity)")
                // Enough of both that the comparison means something.
                #expect(outcome.hits > 200 && outcome.evictions > 200)
            }
        }
    }

    @Test(arguments: MemoryEvictionPolicy.all)
    func agreesWithTheReferenceOnEveryRequestWithMixedCosts(policy: MemoryEvictionPolicy) throws {
        // Costs 1 to 12 against a per-entry cap of 10: some values are refused, and some
        // replacements change an entry's cost or drop it.
        let cost = { (key: Int) in 1 + (key &* 7 &+ 3) % 12 }
        for seed in 1...3 as ClosedRange<UInt64> {
            let outcome = try replay(
                Self.trace(seed: seed, length: 4_000, capacity: 25), policy: policy, costLimit: 100, countLimit: .max,
                entryCostLimitRatio: 0.1, cost: cost, replacesOnHit: true, context: "seed \(seed), mixed costs")
            #expect(outcome.hits > 200 && outcome.evictions > 200)
        }
    }
}
