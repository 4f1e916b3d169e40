import Foundation
import Testing

@testable import Stash

/// The schema's triggers resolve conflicts with `FAIL`, so that no statement that fires them
/// needs a statement journal; an index of schema 5 with the earlier (`ABORT`) triggers gets
/// them replaced when it opens, and keeps every entry and its totals.
@Suite struct TriggerRevisionTests {
    /// The triggers as schema 5 first wrote them: the same statements without `OR FAIL`.
    static let earlierTriggers = DiskIndex.triggers.replacingOccurrences(of: "OR FAIL ", with: "")

    static func triggerTexts(_ dir: URL) throws -> [String] {
        let db = try SQLiteConnection(path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(5))
        defer { db.close() }
        var texts: [String] = []
        try db.query("SELECT sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name") { texts.append($0.text(0)!) }
        return texts
    }

    @Test func aNewIndexHasTriggersThatFailRatherThanAbort() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(1)))
            try cache.store(pattern(100, seed: 1), forKey: "a")
            cache.close()
            let texts = try Self.triggerTexts(dir)
            #expect(texts.count == DiskIndex.triggerNames.count)
            // Every trigger that writes (all but the one that deletes a state) says OR FAIL.
            #expect(texts.filter { $0.contains("OR FAIL") }.count == DiskIndex.triggerNames.count - 1)
            #expect(texts.allSatisfy { !$0.contains("UPDATE totals") && !$0.contains("UPDATE states") })
        }
    }

    @Test func anIndexWithTheEarlierTriggersGetsThemReplacedAndKeepsItsEntriesAndTotals() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .kibibytes(64), inlineThreshold: .kibibytes(4))
            var cache = try DiskCache(directory: dir, configuration: configuration)
            for i in 0..<40 { try cache.store(pattern(1000 + i, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.store(pattern(9000, seed: 99), forKey: "pinned", pinned: true)
            cache.close()
            // Put the earlier triggers back, as an index written before the revision has them.
            let sizeBefore: Int
            do {
                let db = try SQLiteConnection(
                    path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(5))
                defer { db.close() }
                try db.execute(
                    DiskIndex.triggerNames.map { "DROP TRIGGER \($0);" }.joined() + Self.earlierTriggers)
                sizeBefore = try db.first("SELECT size FROM totals WHERE id = 1") { $0.int(0) } ?? -1
            }
            #expect(try Self.triggerTexts(dir).contains { $0.contains("UPDATE totals") })

            cache = try DiskCache(directory: dir, configuration: configuration)
            defer { cache.close() }
            #expect(try Self.triggerTexts(dir).allSatisfy { !$0.contains("UPDATE totals") })
            #expect(try cache.totalSize.bytes == sizeBefore)
            #expect(try cache.data(forKey: "pinned") == pattern(9000, seed: 99))
            // The replaced triggers keep counting: stores that evict, a removal, an unpin.
            for i in 40..<120 { try cache.store(pattern(1000 + i, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.removeData(forKey: "k119")
            #expect(try cache.unpin("pinned"))
            try cache.flush()
            let sums = try DiskIndexHotPathTests.rows(
                of: cache,
                "SELECT (SELECT sum(size) FROM states), (SELECT count(*) FROM states), (SELECT sum(size) FROM entries)"
            ) { [$0.int(0), $0.int(1), $0.int(2)] }
            #expect(try sums == [[cache.totalSize.bytes, cache.totalCount, cache.totalSize.bytes]])
            #expect(try cache.totalSize.bytes <= ByteCount.kibibytes(64).bytes)
            #expect(try cache.pinnedCount == 0)
            #expect(try cache.verify().isHealthy)
        }
    }
}
