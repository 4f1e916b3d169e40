import Foundation
import Testing

@testable import Stash

/// A skewed random trace: a few keys are popular, most are rare; each key has a fixed size.
func sizedSkewedTrace(count: Int, keys: Int, seed: UInt64) -> [(key: String, size: Int)] {
    var random = SplitMix64(seed: seed)
    let sizes = (0..<keys).map { _ in Int.random(in: 200...6000, using: &random) }
    return (0..<count).map { _ in
        // The square of a uniform draw favours small indices, roughly like a Zipf law.
        let u = Double.random(in: 0..<1, using: &random)
        let k = Int(u * u * u * Double(keys))
        return ("object-\(k)", sizes[k])
    }
}

@Suite struct EvictionPolicyTests {
    @Test(arguments: EvictionPolicy.all)
    func simulatorPredictsEveryHitAndMissOfTheDiskCache(policy: EvictionPolicy) throws {
        try simulatorPredictsTheDiskCache(policy: policy, lowWaterMark: DiskCache.Configuration().lowWaterMark)
    }

    /// Evictions of a third of the cache at once: a contest for room in the main queue that is
    /// over its bound reads the same oldest entries for candidate after candidate (which the
    /// disk cache reads once per eviction and keeps up to date, see `SQLiteEvictionIndex`).
    @Test(arguments: [EvictionPolicy.adaptive, .tinyLFU, .s3fifo])
    func simulatorPredictsTheDiskCacheEvictingInLargeBatches(policy: EvictionPolicy) throws {
        try simulatorPredictsTheDiskCache(policy: policy, lowWaterMark: 0.67)
    }

    private func simulatorPredictsTheDiskCache(policy: EvictionPolicy, lowWaterMark: Double) throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(120_000), countLimit: 60, lowWaterMark: lowWaterMark, inlineThreshold: .bytes(3000),
                evictionPolicy: policy, accessFlushBatch: 16)
            var cache = try DiskCache(directory: dir, configuration: configuration)
            var simulator = EvictionSimulator(
                policy: policy,
                limits: EvictionLimits(sizeLimit: 120_000, countLimit: 60, lowWaterMark: configuration.lowWaterMark))
            var disagreements = 0
            var hits = 0
            // Long enough for TinyLFU's sketch to widen and to age more than once.
            for (step, request) in sizedSkewedTrace(count: 9000, keys: 400, seed: 7).enumerated() {
                let cached = try cache.data(forKey: request.key) != nil
                if !cached {
                    try cache.store(Data(count: request.size), forKey: request.key)
                    try cache.flush()  // the simulator evicts at each store: so does each commit
                }
                let predicted = try simulator.request(key: request.key, size: request.size)
                if cached != predicted { disagreements += 1 }
                if cached { hits += 1 }
                if step == 2000 || step == 6000 {
                    // Policy state (queues, ranks, hit counts, ghosts, hand, sketch) lives in the
                    // index; only the adaptive climber's ghosts and regrets are lost, as in the
                    // simulator's reopening.
                    cache.close()
                    cache = try DiskCache(directory: dir, configuration: configuration)
                    simulator.reopen()
                }
            }
            #expect(disagreements == 0)
            #expect(hits > 1000 && hits < 8000, "hits \(hits): the trace must exercise both outcomes")
            #expect(try cache.totalCount == simulator.index.evictable.count)
            #expect(try cache.totalSize.bytes == simulator.index.evictable.size)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test(arguments: EvictionPolicy.all)
    func hardLimitsHoldAfterEveryWrite(policy: EvictionPolicy) throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .bytes(50_000), countLimit: 20, evictionPolicy: policy))
            for (step, request) in sizedSkewedTrace(count: 600, keys: 100, seed: 3).enumerated() {
                if try cache.data(forKey: request.key) == nil {
                    try cache.store(Data(count: request.size), forKey: request.key)
                }
                #expect(try cache.totalSize.bytes <= 50_000, "step \(step)")
                #expect(try cache.totalCount <= 20, "step \(step)")
            }
        }
    }

    @Test func policiesAreNamedAndParsed() {
        #expect(
            EvictionPolicy.all.map(\.description) == [
                "lru", "fifo", "sieve", "s3-fifo", "tinylfu", "adaptive", "tinylfu-bytes",
            ])
        #expect(EvictionPolicy(name: "Adaptive") == .adaptive)
        #expect(EvictionPolicy(name: "S3-FIFO") == .s3fifo)
        #expect(EvictionPolicy(name: "TinyLFU-bytes") == .tinyLFU(objective: .byteMissRatio))
        #expect(EvictionPolicy.tinyLFU(objective: .objectMissRatio) == .tinyLFU)
        #expect(EvictionPolicy.sieve.objective == .objectMissRatio)
        #expect(EvictionPolicy(name: "arc") == nil)
    }

    @Test func theDefaultPolicyIsAdaptiveMinimisingMisses() {
        #expect(DiskCache.Configuration().evictionPolicy == .adaptive)
        #expect(EvictionPolicy.adaptive.objective == .objectMissRatio)
        #expect(EvictionPolicy.tinyLFU.objective == .objectMissRatio)
    }

    @Test func changingThePolicyOfAnExistingCacheResetsItsStateAndKeepsLimits() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(
                    directory: dir, configuration: .init(sizeLimit: .bytes(10_000), evictionPolicy: .s3fifo))
                for i in 0..<30 { try cache.store(Data(count: 900), forKey: "k\(i)") }
                cache.close()
            }
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .bytes(10_000), evictionPolicy: .leastRecentlyUsed))
            for i in 30..<60 { try cache.store(Data(count: 900), forKey: "k\(i)") }
            // LRU sees every entry in one queue: the oldest keys go first.
            #expect(try cache.totalSize.bytes <= 10_000)
            #expect(try cache.allKeys.allSatisfy { Int($0.dropFirst())! >= 49 })
        }
    }

    @Test(arguments: EvictionPolicy.all)
    func theStoredPolicyIsReadWithoutOpeningTheCache(policy: EvictionPolicy) throws {
        try withTemporaryDirectory { dir in
            let empty = dir.appendingPathComponent("empty")
            #expect(DiskCache.storedEvictionPolicy(in: empty) == nil)
            #expect(!FileManager.default.fileExists(atPath: empty.path))
            let cache = try DiskCache(directory: dir, configuration: .init(evictionPolicy: policy))
            try cache.store(Data(count: 10), forKey: "k")
            #expect(DiskCache.storedEvictionPolicy(in: dir) == policy)
            cache.close()
            #expect(DiskCache.storedEvictionPolicy(in: dir) == policy)
        }
    }

    @Test func noStoredPolicyIsReadFromAnIndexThatIsNotOne() throws {
        try withTemporaryDirectory { dir in
            let index = dir.appendingPathComponent("index.sqlite")
            let garbage = Data("not a database, just bytes that happen to sit here".utf8)
            try garbage.write(to: index)
            #expect(DiskCache.storedEvictionPolicy(in: dir) == nil)
            #expect(try Data(contentsOf: index) == garbage)
        }
    }

    @Test func aHitRecordedForAFrontTierCountsForEvictionWithoutReadingOrCounting() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .bytes(3_000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed))
            for key in ["a", "b", "c"] { try cache.store(Data(count: 1_000), forKey: key) }
            cache.recordHit(forKey: "a")
            cache.recordHit(forKey: "never-stored")
            cache.recordHit(forKey: "")
            try cache.store(Data(count: 1_000), forKey: "d")
            // "a" was the least recently used until its recorded hit: "b" goes instead.
            #expect(try Set(cache.allKeys) == ["a", "c", "d"])
            #expect(cache.statistics.hits == 0)
            #expect(try !cache.containsData(forKey: "never-stored"))
        }
    }

    @Test func recordedHitsAreWrittenOnCloseAndSurviveARelaunch() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(3_000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed)
            do {
                let cache = try DiskCache(directory: dir, configuration: configuration)
                for key in ["a", "b", "c"] { try cache.store(Data(count: 1_000), forKey: key) }
                for _ in 0..<3 { cache.recordHit(forKey: "a") }
                cache.close()
            }
            let cache = try DiskCache(directory: dir, configuration: configuration)
            try cache.store(Data(count: 1_000), forKey: "d")
            #expect(try Set(cache.allKeys) == ["a", "c", "d"])
        }
    }

    @Test func hitsForManyKeysAreWrittenInTheBackgroundBeforeTheyPileUp() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .megabytes(10), evictionPolicy: .leastRecentlyUsed))
            try cache.store(Data(count: 10), forKey: "a")
            try cache.flush()
            let before = try #require(try cache.attributes(forKey: "a")).lastAccess
            cache.recordHit(forKey: "a")
            for i in 1..<DiskCache.frontTierHitLimit { cache.recordHit(forKey: "never-stored-\(i)") }
            cache.waitForBackgroundWork()
            // Written by the background flush, not by a read: attributes(forKey:) does not flush.
            let reopened = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .megabytes(10), evictionPolicy: .leastRecentlyUsed))
            let after = try #require(try reopened.attributes(forKey: "a")).lastAccess
            #expect(after > before)
        }
    }
}
