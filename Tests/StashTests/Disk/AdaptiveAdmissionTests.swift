import Foundation
import Testing

@testable import Stash

/// The adaptive policy's admission contest weighs requests per byte: a window candidate that
/// takes part of its room from free space in the main queue must outweigh, per byte, the
/// victims that give the rest.
@Suite struct AdaptiveAdmissionTests {
    /// A 100-byte cache at the starting share (a window of 50 bytes): the main queue holds eight
    /// unread 5-byte entries requested once each (40 bytes: 10 free), the window "w0" (20 bytes,
    /// requested 3 times), "w1" (20), "w2" (10) and the entry being written, "new" (20).
    private func indexAtTheContest() throws -> (index: InMemoryEvictionIndex, ids: [String: Int64]) {
        let main = (0..<8).map { ("m\($0)", 5, EvictionPolicy.mainQueue, 1) }
        let window = [("w0", 20, 3), ("w1", 20, 1), ("w2", 10, 1), ("new", 20, 1)].map {
            ($0.0, $0.1, EvictionPolicy.smallQueue, $0.2)
        }
        return try Self.index(of: main + window, writing: "new")
    }

    /// An in-memory index holding `entries` (key, size, queue, requests), oldest first, each
    /// key requested as often in the sketch, while `incoming` is being written.
    static func index(of entries: [(String, Int, Int, Int)], writing incoming: String) throws
        -> (index: InMemoryEvictionIndex, ids: [String: Int64])
    {
        var index = InMemoryEvictionIndex()
        var ids: [String: Int64] = [:]
        for (key, size, queue, requests) in entries {
            let id = Int64(ids.count + 1)
            ids[key] = id
            let fingerprint = DiskCache.fingerprint(Array(key.utf8))
            try index.withFrequencySketch { $0.add(fingerprint, count: requests) }
            let state = PolicyState(queue: queue, rank: try index.nextRank(), frequency: 0)
            index.upsert(id: id, size: size, state: state, fingerprint: fingerprint)
        }
        index.protected = ids[incoming]
        return (index, ids)
    }

    /// A candidate requested more often than its victims, but less per byte, is evicted.
    ///
    /// The cache is 10 bytes over. "w0" needs 20 bytes of the main queue, 10 of them free:
    /// against the two 5-byte victims that give the rest it is requested more often (3 against
    /// 2), but less per byte (3 per 20 against 2 per 10). So it is evicted, which makes the
    /// room, and the main queue keeps all eight; with plain sums (TinyLFU, and this policy
    /// before) "w0" displaced two of them.
    @Test func aCandidateTakingFreeRoomMustOutweighItsVictimsPerByte() throws {
        var (index, ids) = try indexAtTheContest()
        #expect(try index.withFrequencySketch { $0.climber.windowShare } == WindowClimber.startingShare)

        try EvictionPolicy.adaptive.evict(from: &index, targetSize: 100, targetCount: .max, capacity: 100)

        #expect(index.evicted == [ids["w0"]!])
        #expect(index.evictable.size == 90)
        // The same contest in TinyLFU compares plain sums: "w0" moves to the main queue.
        var (tiny, tinyIDs) = try indexAtTheContest()
        try EvictionPolicy.tinyLFU.evict(from: &tiny, targetSize: 100, targetCount: .max, capacity: 100)
        #expect(tiny.stored[tinyIDs["w0"]!]?.state.queue == EvictionPolicy.mainQueue)
        #expect(tiny.evicted == [tinyIDs["m0"]!, tinyIDs["m1"]!])
    }

    /// Requested 5 times, "w0" outweighs the victims per byte too (5 per 20 against 2 per 10).
    @Test func aCandidateRequestedOftenEnoughPerByteIsAdmitted() throws {
        var (index, ids) = try indexAtTheContest()
        try index.withFrequencySketch { $0.add(DiskCache.fingerprint(Array("w0".utf8)), count: 2) }

        try EvictionPolicy.adaptive.evict(from: &index, targetSize: 100, targetCount: .max, capacity: 100)

        #expect(index.stored[ids["w0"]!]?.state.queue == EvictionPolicy.mainQueue)
        #expect(index.evicted == [ids["m0"]!, ids["m1"]!])
        #expect(index.evictable.size == 100)
    }

    /// The comparison is exact: cross products in full width, ties are not wins.
    @Test func perByteComparisonIsExactAtTiesAndLargeSizes() {
        #expect(!EvictionPolicy.exceedsPerUnit(3, 30, 2, 20))
        #expect(EvictionPolicy.exceedsPerUnit(4, 30, 2, 20))
        #expect(!EvictionPolicy.exceedsPerUnit(15, Int.max, 15, Int.max))
        #expect(EvictionPolicy.exceedsPerUnit(15, Int.max - 1, 15, Int.max))
        #expect(!EvictionPolicy.exceedsPerUnit(0, 1, 0, Int.max))
    }

    /// A 100-byte cache at the starting share (a window of 50 bytes) whose main queue holds five
    /// unread 10-byte entries requested once each, and whose window holds nothing but the entry
    /// being written, "big" (60 bytes, requested `requests` times): alone more than the window.
    private func indexWithALargeNewcomer(requests: Int) throws -> (index: InMemoryEvictionIndex, ids: [String: Int64]) {
        let main = (0..<5).map { ("m\($0)", 10, EvictionPolicy.mainQueue, 1) }
        return try Self.index(of: main + [("big", 60, EvictionPolicy.smallQueue, requests)], writing: "big")
    }

    /// The entry being written, alone larger than the window, competes for its room.
    ///
    /// No other window entry can make its room, so it competes with the main queue's victims
    /// like any candidate. Requested once
    /// against "m0"'s once (1 per 60 bytes against 1 per 10) it loses and is evicted itself, and
    /// the main queue keeps all five. Before, it was kept and "m0" went without a contest.
    @Test func aNewcomerLargerThanTheWindowMustOutweighItsVictims() throws {
        var (index, ids) = try indexWithALargeNewcomer(requests: 1)

        try EvictionPolicy.adaptive.evict(from: &index, targetSize: 100, targetCount: .max, capacity: 100)

        #expect(index.evicted == [ids["big"]!])
        #expect(index.evictable.size == 50)
        // TinyLFU keeps every entry through its own write (its window is never that small
        // unless the entry is larger than a tenth of the cache): "m0" goes.
        var (tiny, tinyIDs) = try indexWithALargeNewcomer(requests: 1)
        try EvictionPolicy.tinyLFU.evict(from: &tiny, targetSize: 100, targetCount: .max, capacity: 100)
        #expect(tiny.evicted == [tinyIDs["m0"]!])
    }

    /// Requested 7 times (7 per 60 bytes against 1 per 10), the newcomer wins: its victim goes
    /// and it joins the main queue, whose room it took.
    @Test func aNewcomerLargerThanTheWindowThatOutweighsItsVictimsJoinsTheMainQueue() throws {
        var (index, ids) = try indexWithALargeNewcomer(requests: 7)

        try EvictionPolicy.adaptive.evict(from: &index, targetSize: 100, targetCount: .max, capacity: 100)

        #expect(index.evicted == [ids["m0"]!])
        #expect(index.stored[ids["big"]!]?.state.queue == EvictionPolicy.mainQueue)
        #expect(index.evictable.size == 100)
    }

    /// An entry being written that is larger than the eviction target competes with the whole
    /// main queue.
    ///
    /// A low-water mark of 90 % is below its 95 bytes. Requested 15 times against the
    /// five entries' once each (15 per 95 bytes against 5 per 50) it wins and stays, over the
    /// target but within the limit, as it did before it could lose. It lost for want of room
    /// when its limit was the target.
    @Test func aNewcomerLargerThanTheTargetCompetesWithTheWholeMainQueue() throws {
        let main = (0..<5).map { ("m\($0)", 10, EvictionPolicy.mainQueue, 1) }
        var (index, ids) = try Self.index(
            of: main + [("big", 95, EvictionPolicy.smallQueue, 15)], writing: "big")

        try EvictionPolicy.adaptive.evict(from: &index, targetSize: 90, targetCount: .max, capacity: 100)

        #expect(index.evicted == (0..<5).map { ids["m\($0)"]! })
        #expect(index.stored[ids["big"]!]?.state.queue == EvictionPolicy.mainQueue)
        #expect(index.evictable.size == 95)
    }

    /// The same through a real `DiskCache`.
    ///
    /// The store returns, but the value is not kept (its file is removed and its eviction
    /// reported); the entries it would have displaced stay. Stored again and again, its requests add up until it wins its room.
    @Test func aDiskCacheTurnsAwayALargeNewcomerUntilItIsRequestedEnough() throws {
        try withTemporaryDirectory { dir in
            let evicted = LockedValue<[String]>([])
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    sizeLimit: .bytes(100_000), lowWaterMark: 1.0,
                    onEviction: { event in evicted.withLock { $0.append("\(event.key) \(event.reason)") } }))
            for i in 0..<5 { try cache.store(pattern(10_000, seed: UInt64(i)), forKey: "m\(i)") }

            try cache.store(pattern(60_000, seed: 9), forKey: "big")
            try cache.flush()  // the contest runs when the store commits

            #expect(try !cache.containsData(forKey: "big"))
            #expect(evicted.withLock { $0 } == ["big notAdmitted"])
            #expect(cache.statistics.notAdmitted == 1)
            #expect(cache.statistics.evictions == 1)
            for i in 0..<5 { #expect(try cache.data(forKey: "m\(i)") == pattern(10_000, seed: UInt64(i))) }
            #expect(try valueFiles(in: dir).isEmpty)  // the small ones are inline
            #expect(try cache.verify().isHealthy)

            var stores = 1
            while try !cache.containsData(forKey: "big"), stores < 16 {
                try cache.store(pattern(60_000, seed: 9), forKey: "big")
                try cache.flush()  // the admission contest runs when the store commits
                stores += 1
            }
            #expect(try cache.data(forKey: "big") == pattern(60_000, seed: 9))
            #expect(stores > 2, "the five were each read once above: one store more cannot outweigh them")
            #expect(try cache.totalSize.bytes <= 100_000)
            #expect(try valueFiles(in: dir).count == 1)
            #expect(try cache.verify().isHealthy)
        }
    }

    private func valueFiles(in dir: URL) throws -> [String] {
        let data = dir.appendingPathComponent("data").path
        guard let walker = FileManager.default.enumerator(atPath: data) else { return [] }
        return walker.compactMap { $0 as? String }.filter { !$0.hasSuffix(".meta") && $0.count > 4 }
    }
}
