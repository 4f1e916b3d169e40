import Foundation
import Testing

@testable import Stash

@Suite struct DiskCacheLimitTests {
    @Test func hardByteAndCountLimitsHoldAfterEveryWriteInARandomSequence() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(400_000), countLimit: 25, inlineThreshold: .bytes(4096))
            let cache = try DiskCache(directory: dir, configuration: configuration)
            var generator = SplitMix64(seed: 42)
            for step in 0..<400 {
                let size = Int.random(in: 0...60_000, using: &generator)
                let key = "k\(Int.random(in: 0..<60, using: &generator))"
                try cache.store(pattern(size, seed: UInt64(step)), forKey: key)
                let total = try cache.totalSize.bytes
                let count = try cache.totalCount
                #expect(total <= 400_000, "step \(step): \(total) bytes")
                #expect(count <= 25, "step \(step): \(count) entries")
                #expect(try cache.data(forKey: key) == pattern(size, seed: UInt64(step)))
            }
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func evictsLeastRecentlyUsedEntryWhenOverSizeLimit() throws {
        try withTemporaryDirectory { dir in
            let events = LockedValue([DiskCache.EvictionEvent]())
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(1000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed,
                onEviction: { event in events.withLock { $0.append(event) } })
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for key in ["a", "b", "c", "d"] { try cache.store(pattern(250, seed: 1), forKey: key) }
            // Reads of values still staged count in request order, after their stores.
            _ = try cache.data(forKey: "a")  // a is now the most recently used
            _ = try cache.data(forKey: "c")
            try cache.store(pattern(250, seed: 2), forKey: "e")
            try cache.flush()  // eviction happens when the store commits
            #expect(events.withLock { $0 } == [DiskCache.EvictionEvent(key: "b", size: 250, reason: .sizeLimit)])
            try cache.store(pattern(500, seed: 3), forKey: "f")
            try cache.flush()
            #expect(events.withLock { $0.map(\.key) } == ["b", "d", "a"])
            #expect(Set(try cache.allKeys) == ["c", "e", "f"])
            #expect(cache.statistics.evictions == 3)
        }
    }

    @Test func trimsToTheLowWaterMarkSoAFullCacheDoesNotEvictOnEveryWrite() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .bytes(10_000), lowWaterMark: 0.5, evictionPolicy: .leastRecentlyUsed))
            for i in 0..<10 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(try cache.totalSize.bytes == 10_000)
            try cache.store(pattern(1000, seed: 99), forKey: "k10")
            #expect(try cache.totalSize.bytes == 5000)
            #expect(try cache.allKeys == ["k6", "k7", "k8", "k9", "k10"])
        }
    }

    @Test func firstInFirstOutIgnoresReads() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .bytes(300), lowWaterMark: 1.0, evictionPolicy: .firstInFirstOut))
            for key in ["a", "b", "c"] { try cache.store(pattern(100, seed: 1), forKey: key) }
            _ = try cache.data(forKey: "a")
            try cache.store(pattern(100, seed: 1), forKey: "d")
            #expect(try cache.allKeys == ["b", "c", "d"])
        }
    }

    @Test func expiresEntriesByTimeToLiveWithAnInjectedClock() async throws {
        try await withTemporaryDirectory { dir in
            let clock = TestClock()
            let cache = try DiskCache(
                directory: dir, configuration: .init(defaultTimeToLive: .seconds(60), clock: clock.function))
            let stream = cache.evictions()
            try await cache.store(Data("default".utf8), forKey: "default")
            try await cache.store(Data("short".utf8), forKey: "short", timeToLive: .seconds(10))
            try await cache.store(pattern(40_000, seed: 1), forKey: "pinned", timeToLive: .seconds(1), pinned: true)
            clock.advance(by: 9.5)
            #expect(try await cache.data(forKey: "short") == Data("short".utf8))
            clock.advance(by: 1)
            #expect(try await cache.data(forKey: "short") == nil)
            #expect(try await cache.containsData(forKey: "short") == false)
            #expect(try await cache.data(forKey: "default") == Data("default".utf8))
            clock.advance(by: 50)
            #expect(try await cache.containsData(forKey: "default") == false)
            try cache.removeExpired()
            #expect(try await cache.data(forKey: "pinned") == pattern(40_000, seed: 1))
            #expect(try cache.totalCount == 1)
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == .init(key: "short", size: 5, reason: .expired))
            #expect(await iterator.next() == .init(key: "default", size: 7, reason: .expired))
            let invalid = #expect(throws: StashError.self) {
                try cache.store(Data(), forKey: "bad", timeToLive: .seconds(-1))
            }
            #expect(invalid?.code == .invalidArgument)
        }
    }

    @Test func pinnedEntriesSurviveEvictionTrimAndCountSeparately() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .bytes(1000), countLimit: 3, lowWaterMark: 1.0))
            try cache.store(pattern(800, seed: 1), forKey: "mine", pinned: true)
            try cache.store(pattern(2000, seed: 2), forKey: "big-pinned", pinned: true)
            for i in 0..<10 { try cache.store(pattern(400, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(try cache.pinnedSize.bytes == 2800)
            #expect(try cache.pinnedCount == 2)
            #expect(try cache.totalSize.bytes == 2800 + 800)
            #expect(try cache.totalCount == 4)
            try cache.trim(toSize: .zero)
            #expect(try cache.totalCount == 2)
            #expect(try cache.data(forKey: "mine") == pattern(800, seed: 1))
            // Overwriting keeps the pin unless told otherwise.
            try cache.store(pattern(900, seed: 3), forKey: "mine")
            #expect(try cache.attributes(forKey: "mine")?.isPinned == true)
            #expect(try cache.unpin("mine"))
            #expect(try cache.pinnedCount == 1)
            #expect(try cache.pin("absent") == false)
        }
    }

    @Test func unpinningEvictsWhenTheCacheIsOverItsLimit() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .bytes(1000), lowWaterMark: 1.0))
            try cache.store(pattern(700, seed: 1), forKey: "old")
            try cache.store(pattern(700, seed: 2), forKey: "pinned", pinned: true)
            try cache.unpin("pinned")
            #expect(try cache.allKeys == ["pinned"])
            #expect(try cache.totalSize.bytes == 700)
        }
    }

    @Test func trimToCountKeepsTheMostRecentlyUsed() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .megabytes(1), evictionPolicy: .leastRecentlyUsed))
            for i in 0..<5 { try cache.store(pattern(10, seed: UInt64(i)), forKey: "k\(i)") }
            _ = try cache.data(forKey: "k0")
            try cache.trim(toCount: 2)
            #expect(Set(try cache.allKeys) == ["k0", "k4"])
        }
    }
}
