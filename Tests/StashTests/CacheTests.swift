import Foundation
import Testing

@testable import Stash

/// A small `Codable` value for the JSON and property-list codecs.
struct CachedPhoto: Codable, Hashable, Sendable {
    var id: Int
    var title: String
    var tags: [String]
}

/// Records what a cache's `onEvent` callback reported, in order.
final class CacheEventLog: Sendable {
    private let events = LockedValue<[CacheEvent]>([])

    var callback: @Sendable (CacheEvent) -> Void { { [events] event in events.withLock { $0.append(event) } } }

    var all: [CacheEvent] { events.withLock { $0 } }

    /// The keys of the `.decodingFailed` events, with their error codes.
    var decodingFailures: [String: StashError.Code] {
        var failures: [String: StashError.Code] = [:]
        for case .decodingFailed(let key, let error) in all { failures[key] = error.code }
        return failures
    }
}

@Suite struct CacheTests {
    private let photo = CachedPhoto(id: 42, title: "Lake at dawn — 湖", tags: ["lake", "dawn"])

    // MARK: - Tiers

    @Test func storeWritesThroughToMemoryAndDisk() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .json(CachedPhoto.self))
            try cache.store(photo, forKey: "photo-42")

            #expect(cache.memory.value(forKey: "photo-42") == photo)
            let bytes = try #require(try cache.disk.data(forKey: "photo-42"))
            #expect(try JSONDecoder().decode(CachedPhoto.self, from: bytes) == photo)
            #expect(try cache.valueAndTier(forKey: "photo-42")?.tier == .memory)
            #expect(cache.statistics.disk.writes == 1)
        }
    }

    @Test func memoryHitsCountForTheDiskTiersEviction() throws {
        try withTemporaryDirectory { dir in
            let disk = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .bytes(3_000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed))
            let cache = Cache(disk: disk, codec: .data)
            for key in ["a", "b", "c"] { try cache.store(Data(count: 1_000), forKey: key) }
            #expect(try cache.valueAndTier(forKey: "a")?.tier == .memory)
            try cache.store(Data(count: 1_000), forKey: "d")
            // Without the memory hit reaching the disk, "a" would be its least recently used entry.
            #expect(try Set(disk.allKeys) == ["a", "c", "d"])
        }
    }

    /// A memory hit only counts itself in the memory tier; the hits reach the disk tier's access
    /// log later, in one batch, each key once with its count (here by hand, as the scheduled
    /// hand-over or a write through the cache would).
    @Test func memoryHitsReachTheDiskTierInOneBatch() throws {
        try withTemporaryDirectory { dir in
            // A delay far beyond the test, so that nothing is handed over or flushed behind its back.
            let disk = try DiskCache(directory: dir, configuration: .init(accessFlushDelay: .seconds(3_600)))
            let cache = Cache(disk: disk, codec: .data)
            for key in ["a", "b", "c"] { try cache.store(Data(count: 10), forKey: key) }
            for _ in 0..<3 { #expect(try cache.valueAndTier(forKey: "a")?.tier == .memory) }
            #expect(try cache.valueAndTier(forKey: "b")?.tier == .memory)
            #expect(cache.statistics.memoryHits == 4)
            #expect(disk.accessLog.withLock { $0.frontTierCount } == 0)

            cache.forwardMemoryHits()
            #expect(disk.accessLog.withLock { $0.frontTierCount } == 2)
            #expect(cache.memory.takeReportedHits().isEmpty)
            #expect(cache.statistics.memoryHits == 4)
        }
    }

    /// Hits on an entry that leaves memory before the hand-over still reach the disk tier.
    @Test func memoryHitsOnAnEvictedEntryStillReachTheDiskTier() throws {
        try withTemporaryDirectory { dir in
            let disk = try DiskCache(directory: dir, configuration: .init(accessFlushDelay: .seconds(3_600)))
            let cache = Cache(disk: disk, codec: .data)
            try cache.store(Data(count: 10), forKey: "a")
            _ = try cache.value(forKey: "a")
            _ = try cache.value(forKey: "a")
            cache.memory.handleMemoryPressure(.critical)
            let reported = cache.memory.takeReportedHits()
            #expect(reported.map(\.key) == ["a"] && reported.map(\.hits) == [2])
        }
    }

    @Test func theMemoryTiersPolicyIsChosenAtCreation() throws {
        try withTemporaryDirectory { dir in
            #expect(try Cache(directory: dir, codec: .data).memory.policy == .adaptive)
            let cache = try Cache(directory: dir, memoryEvictionPolicy: .s3fifo, codec: .data)
            #expect(cache.memory.policy == .s3fifo)
            #expect(cache.disk.configuration.evictionPolicy == .adaptive)
        }
    }

    @Test func readAfterAMemoryPurgeIsServedFromDiskThenFromMemory() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            try cache.store("hello", forKey: "greeting")
            cache.memory.handleMemoryPressure(.critical)
            #expect(cache.memory.totalCount == 0)

            let first = try #require(try cache.valueAndTier(forKey: "greeting"))
            #expect(first.value == "hello" && first.tier == .disk)
            let second = try #require(try cache.valueAndTier(forKey: "greeting"))
            #expect(second.value == "hello" && second.tier == .memory)
            #expect(try cache.value(forKey: "absent") == nil)

            let statistics = cache.statistics
            #expect(statistics.memoryHits == 1)
            #expect(statistics.diskHits == 1)
            #expect(statistics.misses == 1)
            #expect(statistics.decodingFailures == 0)
            #expect(statistics.hitRatio == 2.0 / 3.0)
            #expect(statistics.memory.hits == 1 && statistics.memory.misses == 2)
            #expect(statistics.memory.insertions == 2)  // the store and the promotion
            #expect(statistics.disk.hits == 1 && statistics.disk.misses == 1)
        }
    }

    @Test func diskValueSurvivesAMemoryPurgeAndARelaunch() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try Cache(directory: dir, codec: .json(CachedPhoto.self))
                try cache.store(photo, forKey: "photo-42")
                cache.memory.removeAll()
                #expect(try cache.valueAndTier(forKey: "photo-42")?.tier == .disk)
                // A relaunch follows the end of the process that closed the cache. Dropped here
                // instead, the last reference may still be held by a background hit flush.
                cache.disk.close()
            }
            let relaunched = try Cache(directory: dir, codec: .json(CachedPhoto.self))
            #expect(relaunched.memory.totalCount == 0)
            let first = try #require(try relaunched.valueAndTier(forKey: "photo-42"))
            #expect(first.value == photo && first.tier == .disk)
            #expect(try relaunched.valueAndTier(forKey: "photo-42")?.tier == .memory)
            #expect(relaunched.statistics.diskHits == 1 && relaunched.statistics.memoryHits == 1)
        }
    }

    @Test func memoryPressureWarningHalvesMemoryAndTheRestIsReadFromDisk() throws {
        try withTemporaryDirectory { dir in
            // One shard, so that one LRU order covers every entry (a sharded tier halves each
            // shard in its own order: see the next test).
            let memory = MemoryCache<CacheKey, Data>(policy: .leastRecentlyUsed, shards: 1, cost: { $0.count })
            let cache = Cache(disk: try DiskCache(directory: dir), memory: memory, codec: .data)
            for i in 0..<4 { try cache.store(pattern(10, seed: UInt64(i)), forKey: "k\(i)") }
            cache.memory.handleMemoryPressure(.warning)
            #expect(cache.memory.totalCount == 2)

            var tiers: [CacheTier] = []
            for i in 0..<4 {
                let hit = try #require(try cache.valueAndTier(forKey: "k\(i)"))
                #expect(hit.value == pattern(10, seed: UInt64(i)))
                tiers.append(hit.tier)
            }
            #expect(tiers == [.disk, .disk, .memory, .memory])  // the least recently used went first
            #expect(cache.memory.totalCount == 4)
        }
    }

    @Test func memoryPressureWarningHalvesAShardedMemoryTierAndTheRestIsReadFromDisk() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .data)
            #expect(cache.memory.shardCount > 1)
            for i in 0..<40 { try cache.store(pattern(10, seed: UInt64(i)), forKey: "k\(i)") }
            cache.memory.handleMemoryPressure(.warning)
            // Each shard keeps its part of half the cost and half the count; a shard holding an
            // odd number of these equal entries keeps the half rounded down, so at most one
            // entry per shard more goes than from one shard.
            let kept = cache.memory.totalCount
            #expect(kept <= 20 && kept >= 20 - cache.memory.shardCount)
            #expect(cache.memory.totalCost == kept * 10)

            var tiers: [CacheTier: Int] = [:]
            for i in 0..<40 {
                let hit = try #require(try cache.valueAndTier(forKey: "k\(i)"))
                #expect(hit.value == pattern(10, seed: UInt64(i)))
                tiers[hit.tier, default: 0] += 1
            }
            #expect(tiers == [.disk: 40 - kept, .memory: kept])
            #expect(cache.memory.totalCount == 40)
            cache.memory.handleMemoryPressure(.critical)
            #expect(cache.memory.totalCount == 0 && cache.memory.totalCost == 0)
        }
    }

    // MARK: - Codecs

    private func expectRoundTrip<Value: Sendable & Equatable>(
        _ value: Value, _ codec: some ValueCodec<Value>, in dir: URL
    ) throws {
        let cache = try Cache(directory: dir.appendingPathComponent("\(Value.self)"), codec: codec)
        try cache.store(value, forKey: "k")
        #expect(try cache.valueAndTier(forKey: "k").map { $0.value == value && $0.tier == .memory } == true)
        cache.memory.removeAll()
        #expect(try cache.valueAndTier(forKey: "k").map { $0.value == value && $0.tier == .disk } == true)
        #expect(try cache.disk.data(forKey: "k").map(codec.decode) == value)
    }

    @Test func roundTripsEverySupportedCodecThroughBothTiers() throws {
        try withTemporaryDirectory { dir in
            try expectRoundTrip(Data([0, 1, 0xFF, 0x80, 0]), .data, in: dir)
            try expectRoundTrip(pattern(100_000, seed: 7), DataCodec(), in: dir.appendingPathComponent("large"))
            try expectRoundTrip("naïve café 🚀 湖", .string, in: dir)
            try expectRoundTrip(photo, .json(CachedPhoto.self), in: dir)
            try expectRoundTrip([photo, photo], .propertyList([CachedPhoto].self), in: dir)
        }
    }

    @Test func undecodableBytesOnDiskAreAMissThatRemovesTheEntryAndReportsIt() throws {
        try withTemporaryDirectory { dir in
            let events = CacheEventLog()
            let cache = try Cache(directory: dir, codec: .json(CachedPhoto.self), onEvent: events.callback)
            try cache.disk.store(Data("{\"id\": \"not a number\"}".utf8), forKey: "photo-42")

            #expect(try cache.value(forKey: "photo-42") == nil)
            #expect(try cache.disk.containsData(forKey: "photo-42") == false)
            #expect(cache.memory.totalCount == 0)
            #expect(events.decodingFailures == ["photo-42": .decodingFailed])
            #expect(events.all.count == 1)
            var statistics = cache.statistics
            #expect(statistics.decodingFailures == 1 && statistics.misses == 1 && statistics.hits == 0)

            #expect(try cache.value(forKey: "photo-42") == nil)  // now an ordinary miss
            statistics = cache.statistics
            #expect(statistics.decodingFailures == 1 && statistics.misses == 2 && statistics.failedRemovals == 0)
            #expect(events.all.count == 1)
        }
    }

    @Test func invalidUTF8IsADecodingFailureForTheStringCodec() async throws {
        try await withTemporaryDirectory { dir in
            let events = CacheEventLog()
            let cache = try Cache(directory: dir, codec: .string, onEvent: events.callback)
            try await cache.disk.store(Data([0x61, 0xFF, 0x62]), forKey: "text")
            #expect(try await cache.value(forKey: "text") == nil)
            #expect(try await cache.disk.containsData(forKey: "text") == false)
            #expect(events.decodingFailures == ["text": .decodingFailed])
            #expect(cache.statistics.decodingFailures == 1)
        }
    }

    @Test func encodingFailureThrowsTheCodecsErrorAndChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .json(Double.self))
            try cache.store(1.5, forKey: "k")
            let error = #expect(throws: StashError.self) { try cache.store(.nan, forKey: "k") }
            #expect(error?.code == .invalidArgument)
            #expect(error?.cause is EncodingError)
            #expect(cache.memory.value(forKey: "k") == 1.5)
            #expect(try cache.disk.data(forKey: "k") == Data("1.5".utf8))
            #expect(cache.statistics.disk.writes == 1)

            let plist = try Cache(directory: dir.appendingPathComponent("plist"), codec: .propertyList(Int.self))
            #expect(throws: StashError.self) { try plist.store(1, forKey: "bare") }
            #expect(try plist.containsValue(forKey: "bare") == false)
        }
    }

    // MARK: - Keys

    @Test func nfcAndNFDSpellingsAreTwoKeysInBothTiers() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality, which the tiers must not use
        #expect(CacheKey(composed) != CacheKey(decomposed))
        #expect(Set([CacheKey(composed), CacheKey(decomposed), CacheKey(composed)]).count == 2)
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            try cache.store("composed", forKey: composed)
            try cache.store("decomposed", forKey: decomposed)
            #expect(cache.memory.totalCount == 2)
            #expect(try cache.disk.totalCount == 2)
            #expect(try cache.valueAndTier(forKey: composed).map { $0 == ("composed", .memory) } == true)
            #expect(try cache.valueAndTier(forKey: decomposed).map { $0 == ("decomposed", .memory) } == true)

            cache.memory.removeAll()
            #expect(try cache.valueAndTier(forKey: decomposed).map { $0 == ("decomposed", .disk) } == true)
            #expect(try cache.valueAndTier(forKey: composed).map { $0 == ("composed", .disk) } == true)

            try cache.removeValue(forKey: composed)
            #expect(try cache.value(forKey: composed) == nil)
            #expect(try cache.value(forKey: decomposed) == "decomposed")
            #expect(try cache.disk.allKeys.map { Array($0.utf8) } == [Array(decomposed.utf8)])
        }
    }

    @Test func emptyKeyThrowsInvalidKeyFromEveryOperation() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            #expect(throws: StashError.self) { try cache.store("v", forKey: "") }
            #expect(throws: StashError.self) { try cache.value(forKey: "") }
            #expect(throws: StashError.self) { try cache.containsValue(forKey: "") }
            #expect(throws: StashError.self) { try cache.removeValue(forKey: "") }
            let error = await #expect(throws: StashError.self) { try await cache.value(forKey: "") }
            #expect(error?.code == .invalidKey)
            #expect(cache.memory.totalCount == 0)
        }
    }

    // MARK: - Removing and querying

    @Test func removeValueAndRemoveAllClearBothTiers() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            for key in ["a", "b", "c"] { try cache.store(key.uppercased(), forKey: key) }
            try cache.store("pinned", forKey: "p", pinned: true)
            try cache.removeValue(forKey: "a")
            #expect(try cache.value(forKey: "a") == nil)
            #expect(try cache.containsValue(forKey: "a") == false)
            try cache.removeValue(forKey: "never-stored")

            try cache.removeAll()
            #expect(cache.memory.totalCount == 0)
            #expect(try cache.disk.totalCount == 0)
            #expect(try cache.value(forKey: "p") == nil)
        }
    }

    @Test func containsValueLooksInBothTiersWithoutCountingReads() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            try cache.store("v", forKey: "k")
            #expect(try cache.containsValue(forKey: "k"))
            cache.memory.removeAll()
            #expect(try cache.containsValue(forKey: "k"))
            #expect(try cache.containsValue(forKey: "other") == false)
            let statistics = cache.statistics
            #expect(statistics.hits == 0 && statistics.misses == 0)
            #expect(cache.memory.totalCount == 0)  // not promoted
        }
    }

    // MARK: - Cost

    @Test func memoryCostDefaultsToByteCountsForDataAndStringAndOneOtherwise() throws {
        try withTemporaryDirectory { dir in
            let data = try Cache(directory: dir.appendingPathComponent("data"), codec: .data)
            try data.store(Data(count: 100), forKey: "k")
            #expect(data.memory.totalCost == 100)

            let text = try Cache(directory: dir.appendingPathComponent("text"), codec: .string)
            try text.store("héllo", forKey: "k")
            #expect(text.memory.totalCost == 6)

            let photos = try Cache(directory: dir.appendingPathComponent("photos"), codec: .json(CachedPhoto.self))
            try photos.store(photo, forKey: "k")
            #expect(photos.memory.totalCost == 1)

            let priced = try Cache(
                directory: dir.appendingPathComponent("priced"), codec: .json(CachedPhoto.self),
                cost: { $0.tags.count * 10 })
            try priced.store(photo, forKey: "k")
            #expect(priced.memory.totalCost == 20)

            let disk = try DiskCache(directory: dir.appendingPathComponent("shared"), sizeLimit: .megabytes(1))
            let own = MemoryCache<CacheKey, Data>(costLimit: 1_000, cost: { $0.count * 2 })
            let overTiers = Cache(disk: disk, memory: own, codec: .data)
            try overTiers.store(Data(count: 10), forKey: "k")
            #expect(own.totalCost == 20)  // the tier's own cost function
            let explicit = Cache(disk: disk, memory: own, codec: .data, cost: { _ in 7 })
            try explicit.store(Data(count: 10), forKey: "k")
            #expect(own.totalCost == 7)
        }
    }

    @Test func valueTooCostlyForMemoryIsStillStoredOnDisk() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, memoryCostLimit: 1_000, codec: .data)
            try cache.store(Data(count: 500), forKey: "big")  // over 10 % of the memory limit
            #expect(cache.memory.totalCount == 0)
            #expect(try cache.valueAndTier(forKey: "big")?.tier == .disk)
            #expect(throws: StashError.self) {
                try Cache(directory: dir.appendingPathComponent("bad"), memoryCostLimit: -1, codec: .data)
            }
        }
    }
}
