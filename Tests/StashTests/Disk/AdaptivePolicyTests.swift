import Foundation
import Testing

@testable import Stash

/// A feed read newest first: every round posts 10 keys, reads the newest 100 to 400 and then
/// 600 keys that are never read again (a profile scan), so each post is read many times while
/// it is new, but only after one-hit keys have pushed it out of a small window.
private func feedTrace(rounds: Int, seed: UInt64) -> [String] {
    var random = SplitMix64(seed: seed)
    var trace: [String] = []
    for round in 0..<rounds {
        let newest = 10 * round + 9
        let depth = Int.random(in: 100...400, using: &random)
        for offset in 0..<min(depth, newest + 1) { trace.append("post-\(newest - offset)") }
        for scanned in 0..<600 { trace.append("scan-\(round)-\(scanned)") }
    }
    return trace
}

/// Skewed, stationary popularity: the cube of a uniform draw favours small indices.
private func skewedTrace(count: Int, keys: Int, seed: UInt64) -> [String] {
    var random = SplitMix64(seed: seed)
    return (0..<count).map { _ in
        let u = Double.random(in: 0..<1, using: &random)
        return "object-\(Int(u * u * u * Double(keys)))"
    }
}

/// Replays `trace` with entries of 1000 bytes; also returns the adaptive policy's mean window
/// share over the second half of the trace (0 for other policies).
private func replay(_ trace: [String], policy: EvictionPolicy, entries: Int) throws -> (
    simulator: EvictionSimulator, meanShare: Double
) {
    var simulator = EvictionSimulator(
        policy: policy, limits: EvictionLimits(sizeLimit: entries * 1000, countLimit: nil, lowWaterMark: 1.0))
    var shares = 0.0
    for (step, key) in trace.enumerated() {
        try simulator.request(key: key, size: 1000)
        if step >= trace.count / 2 { shares += simulator.index.frequencySketch?.climber.windowShare ?? 0 }
    }
    return (simulator, shares / Double(trace.count - trace.count / 2))
}

@Suite struct AdaptivePolicyTests {
    /// The adaptive window is a CLOCK: a read sets a window entry's bit (once: a second read
    /// writes nothing), and an oldest entry whose bit is set goes round again instead of
    /// leaving the window (under `tinyLFU` the window is a FIFO).
    @Test func aReadGivesAWindowEntryASecondChanceBeforeItLeavesTheWindow() throws {
        // 10 entries of 1000 bytes fill the window (half of a new adaptive climber's 20 000-byte
        // cache, 10 % of a 100 000-byte tinyLFU cache); the 11th pushes one out.
        func queues(_ policy: EvictionPolicy, sizeLimit: Int) throws -> (
            window: [Int64], main: [Int64], readWrites: [Int]
        ) {
            var simulator = EvictionSimulator(
                policy: policy, limits: EvictionLimits(sizeLimit: sizeLimit, countLimit: nil, lowWaterMark: 1.0))
            for key in 0..<10 { try simulator.request(key: "k\(key)", size: 1000) }
            var readWrites: [Int] = []
            for _ in 0..<2 {
                let before = simulator.index.writes
                #expect(try simulator.request(key: "k0", size: 1000))
                readWrites.append(simulator.index.writes - before)
            }
            try simulator.request(key: "k10", size: 1000)
            var index = simulator.index
            return (
                try index.entries(inQueue: EvictionPolicy.smallQueue, fromRank: .min, limit: 20).map(\.id),
                try index.entries(inQueue: EvictionPolicy.mainQueue, fromRank: .min, limit: 20).map(\.id),
                readWrites
            )
        }
        // The simulator numbers entries from 1 in order of first request: k0 is 1, k10 is 11.
        let adaptive = try queues(.adaptive, sizeLimit: 20_000)
        #expect(adaptive.main == [2])
        #expect(adaptive.window == [3, 4, 5, 6, 7, 8, 9, 10, 11, 1])
        #expect(adaptive.readWrites == [1, 0])
        let fixed = try queues(.tinyLFU, sizeLimit: 100_000)
        #expect(fixed.main == [1])
        #expect(fixed.window == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    }

    @Test func theWindowGrowsOnARecencyTraceAndBeatsAFixedWindow() throws {
        let trace = feedTrace(rounds: 120, seed: 5)
        let (adaptive, share) = try replay(trace, policy: .adaptive, entries: 1000)
        let fixed = try replay(trace, policy: .tinyLFU, entries: 1000).simulator
        let lru = try replay(trace, policy: .leastRecentlyUsed, entries: 1000).simulator
        let misses = (adaptive.objectMissRatio, fixed.objectMissRatio, lru.objectMissRatio)
        // On the frequency trace below it stays under 0.1 (here 0.14 over the second half, from 0.01).
        #expect(share >= 0.12, "mean window share \(share); miss ratios \(misses)")
        #expect(adaptive.objectMissRatio < fixed.objectMissRatio - 0.01)
        #expect(adaptive.objectMissRatio <= lru.objectMissRatio + 0.01)
    }

    @Test func theWindowStaysSmallOnAFrequencyTraceAndBeatsLRU() throws {
        let trace = skewedTrace(count: 60_000, keys: 2000, seed: 9)
        let (adaptive, share) = try replay(trace, policy: .adaptive, entries: 100)
        let fixed = try replay(trace, policy: .tinyLFU, entries: 100).simulator
        let lru = try replay(trace, policy: .leastRecentlyUsed, entries: 100).simulator
        let misses = (adaptive.objectMissRatio, fixed.objectMissRatio, lru.objectMissRatio)
        #expect(share <= 0.1, "mean window share \(share); miss ratios \(misses)")
        #expect(adaptive.objectMissRatio <= fixed.objectMissRatio + 0.02)
        #expect(adaptive.objectMissRatio < lru.objectMissRatio - 0.05)
    }

    @Test func theSameSeedGivesTheSameWindow() throws {
        let trace = feedTrace(rounds: 20, seed: 2) + skewedTrace(count: 20_000, keys: 1000, seed: 2)
        let first = try replay(trace, policy: .adaptive, entries: 80).simulator
        let second = try replay(trace, policy: .adaptive, entries: 80).simulator
        #expect(first.index.frequencySketch?.climber == second.index.frequencySketch?.climber)
        #expect(first.hits == second.hits)
    }

    @Test func theClimberKeepsGoingWhileTheHitRateRisesAndTurnsWhenItFalls() {
        #expect(WindowClimber().windowShare == WindowClimber.startingShare)
        var climber = WindowClimber(startingAt: WindowClimber.minimumShare)
        #expect(climber.windowShare == WindowClimber.minimumShare)
        sample(&climber, hits: 500, of: 1000)  // the first sample only sets the baseline
        #expect(climber.windowShare == WindowClimber.minimumShare)
        #expect(climber.previousHitRate == 0.5)
        sample(&climber, hits: 500, of: 1000)  // no evidence at the floor: probe upwards
        #expect(climber.windowShare == WindowClimber.minimumShare + WindowClimber.fullStep)
        let decayed = WindowClimber.fullStep * WindowClimber.stepDecay
        #expect(abs(climber.step - decayed) < 1e-12)
        sample(&climber, hits: 600, of: 1000)  // better by 10 points: again; a change of 5 restarts the step
        #expect(abs(climber.windowShare - (0.01 + WindowClimber.fullStep + decayed)) < 1e-12)
        #expect(climber.step == WindowClimber.fullStep)
        sample(&climber, hits: 540, of: 1000)  // worse by 6 points (noise is 4.4): back
        #expect(abs(climber.windowShare - (0.01 + decayed)) < 1e-12)
        #expect(climber.step == -WindowClimber.fullStep)
    }

    @Test func withoutEvidenceTheWindowDriftsSmallerByAQuarterStep() {
        var climber = WindowClimber(
            windowShare: 0.5, step: 0.04, previousHitRate: 0.5, sampleHits: 0, sampleRequests: 0)
        sample(&climber, hits: 505, of: 1000)  // within the noise
        #expect(abs(climber.windowShare - (0.5 - 0.04 * WindowClimber.lean)) < 1e-12)
        #expect(abs(climber.step + 0.04 * WindowClimber.stepDecay) < 1e-12)
    }

    @Test func aRestoredClimberIsClampedToItsRange() {
        let climber = WindowClimber(
            windowShare: 7, step: -7, previousHitRate: .nan, sampleHits: 9, sampleRequests: 4)
        #expect(climber.windowShare == WindowClimber.maximumShare)
        #expect(climber.step == -WindowClimber.fullStep)
        #expect(climber.previousHitRate == -1)
        #expect(climber.sampleHits == 4)
    }

    @Test func theWindowSurvivesReopeningAndIsSharedWithAnotherCacheObject() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .bytes(400_000), accessFlushBatch: 64)
            #expect(configuration.evictionPolicy == .adaptive)
            let cache = try DiskCache(directory: dir, configuration: configuration)
            let other = try DiskCache(directory: dir, configuration: configuration)
            for key in feedTrace(rounds: 3, seed: 3) where try cache.data(forKey: key) == nil {
                try cache.store(Data(count: 1000), forKey: key)
            }
            cache.close()
            let closed = try #require(cache.sketchSlot.withLock { $0.sketch?.climber })
            #expect(closed.previousHitRate >= 0, "at least one sample was taken")
            // Another object on the same directory reloads the sketch and its climber when it next
            // writes (which counts one more miss); so does a relaunch.
            try other.store(Data(count: 10), forKey: "other")
            let shared = try #require(other.sketchSlot.withLock { $0.sketch })
            var expected = closed
            expected.recordMiss(sampleSize: shared.climberSampleSize)
            #expect(shared.climber == expected)
            other.close()
            let reopened = try DiskCache(directory: dir, configuration: configuration)
            try reopened.index.write { db in try reopened.synchronizeSketch(in: db) }
            #expect(reopened.sketchSlot.withLock { $0.sketch?.climber } == expected)
        }
    }

    private func sample(_ climber: inout WindowClimber, hits: Int, of requests: Int) {
        climber.recordHits(hits)
        for _ in 0..<(requests - hits) { climber.recordMiss(sampleSize: requests) }
    }
}
