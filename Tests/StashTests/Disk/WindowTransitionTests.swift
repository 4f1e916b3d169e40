import Foundation
import Testing

@testable import Stash

/// The work of one eviction under the TinyLFU policies is bounded, whatever the cache's size:
/// a cache filled without eviction keeps its window at its share, and a window far above its
/// share (a climber that shrank it, or an index from before the bound) reaches it over several
/// writes, at most `maximumFreeMoves` moves each.
@Suite struct WindowTransitionTests {
    private static let entries = 20_000

    /// The index writes (queue moves, CLOCK passes, deletions) of each request.
    private static func writesPerRequest(
        _ simulator: inout EvictionSimulator, keys: some Sequence<String>
    ) throws -> [Int] {
        try keys.map { key in
            let before = simulator.index.writes
            try simulator.request(key: key, size: 1)
            return simulator.index.writes - before
        }
    }

    @Test(arguments: [EvictionPolicy.adaptive, .tinyLFU])
    func theFirstEvictionAfterAFillWithoutPressureWritesABoundedNumberOfEntries(policy: EvictionPolicy) throws {
        var simulator = EvictionSimulator(
            policy: policy, limits: EvictionLimits(sizeLimit: Self.entries, countLimit: nil, lowWaterMark: 1.0))
        let fill = try Self.writesPerRequest(&simulator, keys: (0..<Self.entries).map { "fill-\($0)" })
        #expect(fill.allSatisfy { $0 <= EvictionPolicy.maximumBalanceMoves })
        var index = simulator.index
        let window = try index.entries(inQueue: EvictionPolicy.smallQueue, fromRank: .min, limit: Self.entries)
        let share = simulator.index.frequencySketch?.climber.windowShare ?? 0
        let windowLimit = max(
            EvictionPolicy.windowSize(of: Self.entries, meanEntry: 1), Int(Double(Self.entries) * share))
        // Within its share, give or take the writes still catching up with a climber step.
        #expect(window.count <= windowLimit + Self.entries / 8, "window \(window.count), share \(windowLimit)")
        #expect(window.count < Self.entries / 2)

        let pressure = try Self.writesPerRequest(&simulator, keys: (0..<100).map { "new-\($0)" })
        #expect(simulator.index.evictable.count == Self.entries)
        // Each write evicts one entry, moves at most `maximumFreeMoves` and passes over no read entry.
        #expect(pressure.allSatisfy { $0 >= 1 && $0 <= EvictionPolicy.maximumFreeMoves + 2 }, "\(pressure)")
    }

    @Test func aWindowFarAboveItsShareShrinksOverSeveralEvictionsOfBoundedWork() throws {
        // Every entry in the window and an empty main queue: what the first eviction of a cache
        // filled before the bound found, and, in part, what a climber that shrank the window leaves.
        var index = InMemoryEvictionIndex()
        for id in 1...Int64(Self.entries) {
            let state = PolicyState(queue: EvictionPolicy.smallQueue, rank: try index.nextRank(), frequency: 0)
            index.upsert(id: id, size: 1, state: state, fingerprint: id &* 7919)
        }
        let policy = EvictionPolicy.tinyLFU
        var perWrite: [Int] = []
        for id in Int64(Self.entries + 1)...Int64(Self.entries + 200) {
            let state = try policy.insertionState(existing: nil, fingerprint: id &* 7919, in: &index)
            index.upsert(id: id, size: 1, state: state, fingerprint: id &* 7919)
            index.protected = id
            let before = index.writes
            try policy.evict(from: &index, targetSize: Self.entries, targetCount: .max, capacity: Self.entries)
            perWrite.append(index.writes - before)
            index.protected = nil
        }
        // Each write moves 16 entries to the main queue, which then evicts its oldest: 17 writes.
        #expect(perWrite == Array(repeating: EvictionPolicy.maximumFreeMoves + 1, count: 200))
        #expect(try index.queueTotals(EvictionPolicy.mainQueue).count == 200 * (EvictionPolicy.maximumFreeMoves - 1))
        #expect(index.evictable.count == Self.entries)
    }

    @Test func aDiskCacheFilledWithoutPressureChangesFewEntriesAtItsFirstEviction() throws {
        let entries = 3000
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .bytes(entries * 10), lowWaterMark: 1.0)
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for key in 0..<entries { try cache.store(Data(count: 10), forKey: "fill-\(key)") }
            try cache.flush()
            let window = try cache.index.read { db in
                try db.first("SELECT count(*) FROM states WHERE queue = 0") { $0.int(0) }
            }
            let share = try #require(cache.sketchSlot.withLock { $0.sketch?.climber.windowShare })
            // Within its share, give or take the writes still catching up with a climber step.
            #expect(try #require(window) <= Int(Double(entries) * share) + entries / 16, "share \(share)")
            func positions() throws -> [Int64: [Int64]] {
                var rows: [Int64: [Int64]] = [:]
                try cache.index.read { db in
                    try db.query(
                        "SELECT e.id, s.queue, s.rank, s.frequency FROM entries e JOIN states s ON s.seq = e.seq"
                    ) { row in
                        rows[row.int64(0)] = [row.int64(1), row.int64(2), row.int64(3)]
                    }
                }
                return rows
            }
            let before = try positions()
            try cache.store(Data(count: 10), forKey: "over")
            try cache.flush()
            let after = try positions()
            #expect(try cache.totalCount == entries)
            let changed = before.filter { id, position in after[id] != position }
            // One eviction and at most `maximumFreeMoves` moves: not the whole fill.
            #expect(changed.count >= 1 && changed.count <= EvictionPolicy.maximumFreeMoves + 2, "\(changed.count)")
        }
    }
}
