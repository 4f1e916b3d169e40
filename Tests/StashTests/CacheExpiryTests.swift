import Foundation
import Testing

@testable import Stash

/// Time-to-live through both tiers, with both clocks moved by hand.
@Suite struct CacheExpiryTests {
    private struct Tiers {
        let cache: Cache<String>
        let diskClock: TestClock
        let memoryClock: ManualClock

        init(
            in dir: URL, diskDefaultTimeToLive: Duration? = nil, memoryDefaultTimeToLive: Duration? = nil
        ) throws {
            let diskClock = TestClock()
            let memoryClock = ManualClock()
            let disk = try DiskCache(
                directory: dir,
                configuration: .init(defaultTimeToLive: diskDefaultTimeToLive, clock: diskClock.function))
            let memory = MemoryCache<CacheKey, String>(
                defaultTimeToLive: memoryDefaultTimeToLive, cost: { $0.utf8.count }, clock: memoryClock.now)
            self.cache = Cache(disk: disk, memory: memory, codec: .string)
            self.diskClock = diskClock
            self.memoryClock = memoryClock
        }

        func advance(disk diskSeconds: Int, memory memorySeconds: Int) {
            diskClock.advance(by: Double(diskSeconds))
            memoryClock.advance(by: .seconds(memorySeconds))
        }

        func tier(_ key: String) throws -> CacheTier? { try cache.valueAndTier(forKey: key)?.tier }
    }

    @Test func storedTimeToLiveAppliesToBothTiers() throws {
        try withTemporaryDirectory { dir in
            let tiers = try Tiers(in: dir)
            try tiers.cache.store("token", forKey: "session", timeToLive: .seconds(10))
            tiers.advance(disk: 9, memory: 9)
            #expect(try tiers.tier("session") == .memory)

            tiers.advance(disk: 2, memory: 2)
            #expect(try tiers.cache.value(forKey: "session") == nil)
            #expect(tiers.cache.memory.totalCount == 0)
            #expect(try tiers.cache.disk.containsData(forKey: "session") == false)
        }
    }

    @Test func promotedValueStaysInMemoryOnlyAsLongAsItsDiskEntryLives() throws {
        try withTemporaryDirectory { dir in
            let tiers = try Tiers(in: dir)
            try tiers.cache.store("token", forKey: "session", timeToLive: .seconds(10))
            tiers.cache.memory.removeAll()
            tiers.advance(disk: 4, memory: 4)
            #expect(try tiers.tier("session") == .disk)  // 6 s left

            tiers.advance(disk: 0, memory: 5)
            #expect(try tiers.tier("session") == .memory)
            tiers.advance(disk: 0, memory: 2)
            #expect(try tiers.tier("session") == .disk)  // expired in memory, still live on disk
        }
    }

    @Test func pinnedValuesDoNotExpireInEitherTier() throws {
        try withTemporaryDirectory { dir in
            let tiers = try Tiers(in: dir)
            try tiers.cache.store("draft", forKey: "note", timeToLive: .seconds(10), pinned: true)
            tiers.advance(disk: 100, memory: 100)
            #expect(try tiers.tier("note") == .memory)
            tiers.cache.memory.removeAll()
            #expect(try tiers.tier("note") == .disk)
            tiers.advance(disk: 100, memory: 100)
            #expect(try tiers.tier("note") == .memory)
        }
    }

    @Test func diskDefaultTimeToLiveAppliesInMemory() throws {
        try withTemporaryDirectory { dir in
            let tiers = try Tiers(in: dir, diskDefaultTimeToLive: .seconds(10))
            try tiers.cache.store("v", forKey: "k")
            tiers.advance(disk: 0, memory: 11)
            #expect(try tiers.tier("k") == .disk)
        }
    }

    @Test func memoryDefaultTimeToLiveCapsALongerDiskTimeToLive() throws {
        try withTemporaryDirectory { dir in
            let tiers = try Tiers(in: dir, memoryDefaultTimeToLive: .seconds(5))
            try tiers.cache.store("v", forKey: "k", timeToLive: .seconds(10))
            tiers.advance(disk: 0, memory: 4)
            #expect(try tiers.tier("k") == .memory)
            tiers.advance(disk: 0, memory: 2)
            #expect(try tiers.tier("k") == .disk)
        }
    }
}
