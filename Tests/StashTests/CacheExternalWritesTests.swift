import Foundation
import Testing

@testable import Stash

/// `promote(_:forKey:timeToLive:)` and `removeFromMemory(forKey:)`: how code that writes a
/// cache's disk tier directly (a downloader) keeps the memory tier in step.
@Suite struct CacheExternalWritesTests {
    @Test func promoteKeepsADecodedValueInMemoryWithoutWritingTheDisk() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            try cache.disk.store(Data("downloaded".utf8), forKey: "k")
            cache.promote("downloaded", forKey: "k")

            #expect(cache.memory.value(forKey: "k") == "downloaded")
            #expect(try cache.valueAndTier(forKey: "k").map { $0 == ("downloaded", .memory) } == true)
            #expect(cache.statistics.disk.writes == 1)
        }
    }

    @Test func promotedValueLeavesMemoryWhenItsTimeToLiveEnds() throws {
        try withTemporaryDirectory { dir in
            let clock = ManualClock()
            let disk = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            let cache = Cache(disk: disk, memory: MemoryCache(clock: clock.now), codec: .string)
            try disk.store(Data("v".utf8), forKey: "k")
            cache.promote("v", forKey: "k", timeToLive: .seconds(10))
            clock.advance(by: .seconds(9))
            #expect(cache.memory.value(forKey: "k") == "v")
            clock.advance(by: .seconds(2))
            #expect(cache.memory.value(forKey: "k") == nil)
        }
    }

    @Test func removeFromMemoryLeavesTheDiskEntry() throws {
        try withTemporaryDirectory { dir in
            let cache = try Cache(directory: dir, codec: .string)
            try cache.store("old", forKey: "k")
            try cache.disk.store(Data("new".utf8), forKey: "k")
            #expect(try cache.value(forKey: "k") == "old")  // memory does not see direct writes…
            cache.removeFromMemory(forKey: "k")  // …until told
            #expect(cache.memory.totalCount == 0)
            #expect(try cache.valueAndTier(forKey: "k").map { $0 == ("new", .disk) } == true)
        }
    }

    @Test func directWriteLandingBetweenADiskReadAndItsPromotionIsNotOverwrittenByTheOldValue() throws {
        try withTemporaryDirectory { dir in
            let clock = InterruptingClock()
            let disk = try DiskCache(directory: dir, configuration: .init(clock: clock.function))
            let cache = Cache(disk: disk, codec: .string)
            try disk.store(Data("old".utf8), forKey: "k")
            let failure = LockedValue<(any Error)?>(nil)
            clock.arm {
                do {
                    try disk.store(Data("new".utf8), forKey: "k")
                    cache.removeFromMemory(forKey: "k")
                } catch {
                    failure.withLock { $0 = error }
                }
            }

            #expect(try cache.value(forKey: "k") == "old")  // read before the write landed
            #expect(clock.hasFired && failure.withLock { $0 } == nil)
            #expect(cache.memory.totalCount == 0)
            #expect(try cache.valueAndTier(forKey: "k").map { $0 == ("new", .disk) } == true)
        }
    }

    @Test func promotionLandingBetweenADiskReadAndItsPromotionWins() throws {
        try withTemporaryDirectory { dir in
            let clock = InterruptingClock()
            let disk = try DiskCache(directory: dir, configuration: .init(clock: clock.function))
            let cache = Cache(disk: disk, codec: .string)
            try disk.store(Data("old".utf8), forKey: "k")
            clock.arm {
                try? disk.store(Data("new".utf8), forKey: "k")
                cache.promote("new", forKey: "k")
            }

            #expect(try cache.value(forKey: "k") == "old")
            #expect(clock.hasFired)
            #expect(cache.memory.value(forKey: "k") == "new")
        }
    }
}
