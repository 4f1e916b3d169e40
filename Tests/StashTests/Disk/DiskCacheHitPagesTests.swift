import Foundation
import Testing

@testable import Stash

/// Which pages the background write of hits dirties: only what the policy's state change needs,
/// and never one that a read uses.
@Suite struct DiskCacheHitPagesTests {
    /// The page numbers of the frames in the WAL file at `path`.
    static func pagesInWAL(_ path: String) throws -> Set<Int> {
        let wal = try Data(contentsOf: URL(fileURLWithPath: path))
        guard wal.count >= 32 else { return [] }
        func bigEndian(_ offset: Int) -> Int { wal[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        let pageSize = bigEndian(8)
        var pages: Set<Int> = []
        var offset = 32
        while offset + 24 + pageSize <= wal.count {
            pages.insert(bigEndian(offset))
            offset += 24 + pageSize
        }
        return pages
    }

    @Test func hitsThatOnlySetAReferenceBitWriteNoPageOfTheRankIndex() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .megabytes(50), accessFlushDelay: .seconds(3600)))
            for i in 0..<3000 { try cache.store(pattern(10, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.flush()
            let observer = try DiskCacheAccessFlushTests.IndexObserver(dir)
            // An empty WAL: the frames after this are the hits' write. (A checkpoint that finds
            // the cache's background checkpoint running reports busy at once: try again.)
            let deadline = Date() + 30
            while try observer.db.first("PRAGMA wal_checkpoint(TRUNCATE)", map: { $0.int(0) }) != 0, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(observer.walSize() == 0)
            for i in stride(from: 0, to: 3000, by: 7) { #expect(try cache.data(forKey: "k\(i)") != nil) }
            #expect(try cache.flushAccesses() == 429)
            let written = try Self.pagesInWAL(observer.walPath)
            var pages: [String: Set<Int>] = [:]
            try observer.db.query("SELECT name, pageno FROM dbstat") {
                pages[$0.text(0) ?? "", default: []].insert($0.int(1))
            }
            #expect(pages["states_by_rank", default: []].count > 10)  // an index of many pages
            #expect(written.intersection(pages["states", default: []]).count > 10)  // the reference bits
            #expect(written.isDisjoint(with: pages["states_by_rank", default: []]))
            // Nor any page a read uses: the entries, with their bytes, and the index of ids.
            #expect(pages["entries", default: []].count > 10)
            #expect(written.isDisjoint(with: pages["entries", default: []]))
            #expect(written.isDisjoint(with: pages["entries_by_id", default: []]))
        }
    }
}
