import Foundation
import Testing

@testable import Stash

/// The eviction decisions of a write-behind `DiskCache` are the policy's, request by request,
/// whenever its writer and its background write of hits run: the simulator predicts every hit
/// and miss, and every timing of the writer gives the same hits and the same evictions.
///
/// Beside `EvictionPolicyTests.simulatorPredictsEveryHitAndMissOfTheDiskCache`, which flushes
/// after every store (one change per batch), these leave batches of dozens of stores with the
/// reads between them to the writer, and evictions of a quarter of the cache at once.
@Suite struct WriteBehindEvictionTests {
    /// 400 kB holds about 130 of the trace's values; a quarter of it goes at each eviction.
    static let sizeLimit = 400_000
    static let lowWaterMark = 0.75

    static func configuration(_ policy: EvictionPolicy) -> DiskCache.Configuration {
        DiskCache.Configuration(
            sizeLimit: .bytes(sizeLimit), lowWaterMark: lowWaterMark, inlineThreshold: .bytes(8192),
            evictionPolicy: policy, reclaimsOrphansOnOpen: false, stagingLimit: .mebibytes(1))
    }

    /// What a replay of a trace through a cache decided: each request's outcome, and the
    /// evictions in the order they happened.
    struct Decisions: Equatable {
        var hits: [Bool] = []
        var evictions: [String] = []
    }

    /// Replays `trace` (a get per request, a store on a miss), calling `between` after each request.
    static func replay(
        _ trace: [(key: String, size: Int)], in dir: URL, configuration: DiskCache.Configuration,
        between: (DiskCache, Int) throws -> Void = { _, _ in }
    ) throws -> Decisions {
        let evictions = LockedValue<[String]>([])
        var configuration = configuration
        configuration.onEviction = { event in
            evictions.withLock { $0.append("\(event.key) \(event.reason)") }
        }
        let cache = try DiskCache(directory: dir, configuration: configuration)
        var decisions = Decisions()
        for (step, request) in trace.enumerated() {
            let hit = try cache.data(forKey: request.key) != nil
            if !hit { try cache.store(Data(count: request.size), forKey: request.key) }
            decisions.hits.append(hit)
            try between(cache, step)
        }
        cache.close()
        decisions.evictions = evictions.withLock { $0 }
        #expect(try DiskCache(directory: dir, configuration: configuration).verify().isHealthy)
        return decisions
    }

    static func simulate(_ trace: [(key: String, size: Int)], policy: EvictionPolicy) throws -> [Bool] {
        var simulator = EvictionSimulator(
            policy: policy, limits: EvictionLimits(sizeLimit: sizeLimit, countLimit: nil, lowWaterMark: lowWaterMark))
        return try trace.map { try simulator.request(key: $0.key, size: $0.size) }
    }

    /// The writer commits only full batches and batches whose stores exceed the limit (no
    /// delay runs out), and hits are written only with them: each batch holds about 30 stores
    /// and the reads between them, and the test's reads race the writer's commit after every
    /// store that takes the cache over its limit.
    @Test(arguments: EvictionPolicy.all)
    func simulatorPredictsEveryHitAndMissOfAWriteBehindCacheLeftToItsWriter(policy: EvictionPolicy) throws {
        try withTemporaryDirectory { dir in
            var configuration = Self.configuration(policy)
            configuration.maxWriteDelay = .seconds(3600)
            configuration.accessFlushDelay = .seconds(3600)
            let trace = sizedSkewedTrace(count: 6000, keys: 1500, seed: 11)
            let decisions = try Self.replay(trace, in: dir, configuration: configuration)
            let predicted = try Self.simulate(trace, policy: policy)
            let disagreements = zip(decisions.hits, predicted).filter { $0 != $1 }.count
            #expect(disagreements == 0)
            let hits = decisions.hits.filter { $0 }.count
            #expect(hits > 1000 && hits < 5000, "hits \(hits): the trace must exercise both outcomes")
            #expect(decisions.evictions.count > 2000, "evictions \(decisions.evictions.count)")
        }
    }

    /// The same trace under writers that run at once, late, or when the caller flushes at
    /// (seeded) random points, with hits written after every read or only with the batches:
    /// the same hits and the same evictions, in the same order, as a cache that commits every
    /// store before it returns, and the hits the simulator predicts.
    @Test(arguments: [EvictionPolicy.adaptive, .leastRecentlyUsed, .sieve])
    func evictionDecisionsDoNotDependOnWhenTheWriterRuns(policy: EvictionPolicy) throws {
        let trace = sizedSkewedTrace(count: 4000, keys: 1200, seed: 5)
        let base = Self.configuration(policy)
        var immediate = base
        immediate.writeMode = .immediate
        var eager = base
        eager.maxWriteDelay = .zero
        eager.accessFlushDelay = .zero
        eager.accessFlushBatch = 1
        var late = base
        late.maxWriteDelay = .seconds(3600)
        late.accessFlushDelay = .seconds(3600)
        var random = SplitMix64(seed: 17)
        let flushPoints = (0..<trace.count).map { _ in UInt8.random(in: 0..<16, using: &random) }
        let reference = try withTemporaryDirectory { try Self.replay(trace, in: $0, configuration: immediate) }
        #expect(try reference.hits == Self.simulate(trace, policy: policy))
        #expect(reference.evictions.count > 1000, "evictions \(reference.evictions.count)")
        for (name, configuration) in [("at once", eager), ("late", late), ("default delays", base)] {
            let decisions = try withTemporaryDirectory { dir in
                try Self.replay(trace, in: dir, configuration: configuration) { cache, step in
                    // Now and then the caller makes the writer commit, or waits for the hits too.
                    switch flushPoints[step] {
                    case 0: try cache.flush()
                    case 1: cache.waitForBackgroundWork()
                    case 2: try cache.flushAccesses()
                    default: break
                    }
                }
            }
            #expect(decisions.hits == reference.hits, "writer \(name)")
            #expect(decisions.evictions == reference.evictions, "writer \(name)")
        }
    }
}
