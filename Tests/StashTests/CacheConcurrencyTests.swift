import Foundation
import Testing

@testable import Stash

/// A disk clock that runs an action, once, the next time the disk reads it.
///
/// `DiskCache.data(forKey:)` reads its clock after it has the value's bytes (to record the
/// access), so an armed action runs exactly between a `Cache`'s disk read and its promotion.
final class InterruptingClock: Sendable {
    private let action = LockedValue<(@Sendable () -> Void)?>(nil)
    private let firings = LockedValue(0)

    func arm(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }

    var hasFired: Bool { firings.withLock { $0 } > 0 }

    var function: @Sendable () -> Date {
        { [action, firings] in
            let body = action.withLock { action in
                defer { action = nil }
                return action
            }
            if let body {
                firings.withLock { $0 += 1 }
                body()
            }
            return Date()
        }
    }
}

@Suite struct CacheConcurrencyTests {
    /// A value that names the key it was stored under, and who stored it when.
    private struct Payload: Codable, Hashable, Sendable {
        var key: String
        var writer: Int
        var serial: Int
    }

    private struct Tally: Sendable {
        var reads = 0
        var stores = 0
        var garbageWrites = 0
        var mixUps: [String] = []
        var errors: [String] = []

        mutating func add(_ other: Tally) {
            reads += other.reads
            stores += other.stores
            garbageWrites += other.garbageWrites
            mixUps += other.mixUps
            errors += other.errors
        }
    }

    // MARK: - Interleavings, forced

    private func interruptibleCache(in dir: URL) throws -> (Cache<String>, InterruptingClock) {
        let clock = InterruptingClock()
        let disk = try DiskCache(directory: dir, configuration: .init(clock: clock.function))
        return (Cache(disk: disk, codec: .string), clock)
    }

    @Test func storeLandingBetweenADiskReadAndItsPromotionIsNotOverwrittenByTheOldValue() throws {
        try withTemporaryDirectory { dir in
            let (cache, clock) = try interruptibleCache(in: dir)
            try cache.store("old", forKey: "k")
            cache.memory.removeAll()
            let failure = LockedValue<(any Error)?>(nil)
            clock.arm {
                do { try cache.store("new", forKey: "k") } catch { failure.withLock { $0 = error } }
            }

            let read = try #require(try cache.valueAndTier(forKey: "k"))
            #expect(read.value == "old" && read.tier == .disk)  // read before the store landed
            #expect(clock.hasFired && failure.withLock { $0 } == nil)
            #expect(cache.memory.value(forKey: "k") == "new")
            #expect(try cache.disk.data(forKey: "k") == Data("new".utf8))
        }
    }

    @Test func removalLandingBetweenADiskReadAndItsPromotionIsNotUndone() throws {
        try withTemporaryDirectory { dir in
            let (cache, clock) = try interruptibleCache(in: dir)
            try cache.store("old", forKey: "k")
            cache.memory.removeAll()
            clock.arm { try? cache.removeValue(forKey: "k") }

            #expect(try cache.value(forKey: "k") == "old")
            #expect(clock.hasFired)
            #expect(cache.memory.totalCount == 0)
            #expect(try cache.value(forKey: "k") == nil)
        }
    }

    @Test func storeLandingAfterAnUndecodableReadIsNotRemoved() throws {
        try withTemporaryDirectory { dir in
            let (cache, clock) = try interruptibleCache(in: dir)
            try cache.disk.store(Data([0xFF, 0xFE]), forKey: "k")  // not UTF-8
            clock.arm { try? cache.store("good", forKey: "k") }

            #expect(try cache.value(forKey: "k") == nil)
            #expect(clock.hasFired)
            #expect(cache.statistics.decodingFailures == 1)
            #expect(try cache.disk.data(forKey: "k") == Data("good".utf8))
            #expect(try cache.valueAndTier(forKey: "k").map { $0 == ("good", .memory) } == true)
        }
    }

    // MARK: - Stress

    private static let keys = (0..<12).map { "k\($0)" } + ["caf\u{E9}", "cafe\u{301}"]  // NFC and NFD
    private static let badKeys = ["bad0", "bad1"]

    /// In an async context the async overloads win; this runs a blocking one from a task.
    private static func blocking<T>(_ body: () throws -> T) rethrows -> T { try body() }

    /// Performs one random operation, sync or async, and records what it did in `tally`.
    private static func randomOperation(
        on cache: Cache<Payload>, writer: Int, serial: Int, random: inout SplitMix64, tally: inout Tally
    ) async throws {
        let key = keys.randomElement(using: &random)!
        let badKey = badKeys.randomElement(using: &random)!
        func check(_ value: Payload?, _ key: String) {
            if let value, !value.key.utf8.elementsEqual(key.utf8) { tally.mixUps.append("\(key) -> \(value)") }
        }
        let payload = Payload(key: key, writer: writer, serial: serial)
        switch Int.random(in: 0..<1_000, using: &random) {
        case 0..<300:
            tally.reads += 1
            check(try blocking { try cache.value(forKey: key) }, key)
        case 300..<450:
            tally.reads += 1
            check(try await cache.value(forKey: key), key)
        case 450..<600:
            tally.stores += 1
            try blocking { try cache.store(payload, forKey: key) }
        case 600..<700:
            tally.stores += 1
            try await cache.store(payload, forKey: key)
        case 700..<800:
            try await cache.removeValue(forKey: key)
        case 800..<850:
            _ = try blocking { try cache.containsValue(forKey: key) }
        case 850..<900:
            tally.garbageWrites += 1
            try blocking { try cache.disk.store(Data("not json".utf8), forKey: badKey) }
        case 900..<950:
            tally.reads += 1
            if try blocking({ try cache.value(forKey: badKey) }) != nil { tally.mixUps.append("\(badKey) decoded") }
        case 950..<980:
            cache.memory.handleMemoryPressure(.warning)
        case 980..<998:
            cache.memory.handleMemoryPressure(.critical)
        default:
            try blocking { try cache.removeAll() }
        }
    }

    /// Keys whose value in memory is not exactly the value on disk; call only while idle.
    private static func disagreements(in cache: Cache<Payload>) async throws -> [String] {
        var keys: [String] = []
        for key in Self.keys {
            guard let inMemory = cache.memory.value(forKey: CacheKey(key)) else { continue }
            let onDisk = try await cache.disk.data(forKey: key).map { try JSONDecoder().decode(Payload.self, from: $0) }
            if onDisk != inMemory { keys.append("\(key): memory \(inMemory), disk \(String(describing: onDisk))") }
        }
        return keys
    }

    @Test func concurrentOperationsNeverMixUpKeysAndLeaveBothTiersConsistent() async throws {
        try await withTemporaryDirectory { dir in
            let events = CacheEventLog()
            let cache = try Cache(
                directory: dir, sizeLimit: .megabytes(64), memoryCountLimit: 10, codec: .json(Payload.self),
                onEvent: events.callback)
            var total = Tally()
            var disagreements: [String] = []
            // Rounds, so that the tiers are compared at many quiescent points, not only at the end.
            for round in 0..<40 {
                total = await withTaskGroup(of: Tally.self) { group in
                    for writer in 0..<8 {
                        group.addTask {
                            var random = SplitMix64(seed: UInt64(round * 100 + writer))
                            var tally = Tally()
                            for serial in 0..<40 {
                                do {
                                    try await Self.randomOperation(
                                        on: cache, writer: writer, serial: serial, random: &random, tally: &tally)
                                } catch {
                                    tally.errors.append("\(error)")
                                }
                            }
                            return tally
                        }
                    }
                    return await group.reduce(into: total) { $0.add($1) }
                }
                disagreements += try await Self.disagreements(in: cache)
            }

            #expect(total.mixUps.isEmpty)
            #expect(total.errors.isEmpty)
            #expect(disagreements.isEmpty)
            let statistics = cache.statistics
            #expect(statistics.memoryHits + statistics.diskHits + statistics.misses == total.reads)
            #expect(statistics.disk.writes == total.stores + total.garbageWrites)
            #expect(statistics.decodingFailures == events.all.count)
            #expect(statistics.decodingFailures >= 1)
            #expect(statistics.failedRemovals == 0)
            #expect(cache.memory.totalCount <= 10)
            #expect(cache.memory.storageInvariantViolation == nil)
            let report = try await cache.disk.verify()
            #expect(report.isHealthy, "\(report)")
        }
    }

    // MARK: - Async

    @Test func asyncVariantsWorkFromConcurrentTasks() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .json(CachedPhoto.self))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 0..<16 {
                    group.addTask {
                        try await cache.store(CachedPhoto(id: id, title: "p\(id)", tags: []), forKey: "p\(id)")
                    }
                }
                try await group.waitForAll()
            }
            #expect(cache.memory.totalCount == 16)
            cache.memory.removeAll()

            let reads = try await withThrowingTaskGroup(of: (Int, Int?, CacheTier?).self) { group in
                for id in 0..<16 {
                    group.addTask {
                        let hit = try await cache.valueAndTier(forKey: "p\(id)")
                        return (id, hit?.value.id, hit?.tier)
                    }
                }
                return try await group.reduce(into: [(Int, Int?, CacheTier?)]()) { $0.append($1) }
            }
            #expect(reads.count == 16)
            for (id, value, tier) in reads { #expect(value == id && tier == .disk) }
            for id in 0..<16 { #expect(try await cache.valueAndTier(forKey: "p\(id)")?.tier == .memory) }

            #expect(try await cache.containsValue(forKey: "p3"))
            try await cache.removeValue(forKey: "p3")
            #expect(try await cache.value(forKey: "p3") == nil)
            #expect(try await cache.containsValue(forKey: "p3") == false)
            try await cache.removeAll()
            #expect(try cache.disk.totalCount == 0)
            #expect(cache.memory.totalCount == 0)

            let statistics = cache.statistics
            #expect(statistics.diskHits == 16 && statistics.memoryHits == 16 && statistics.misses == 1)
        }
    }
}
