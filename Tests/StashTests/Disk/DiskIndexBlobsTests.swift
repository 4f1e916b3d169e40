import Foundation
import Testing

@testable import Stash

/// Schema 3: inline values live in `blobs`, appended, and an item points at its row. Every
/// way an entry changes or leaves drops its bytes; an index of schema 2 is upgraded in place
/// without copying its values, and read as it is when it cannot be written.
@Suite struct DiskIndexBlobsTests {
    static func open(_ dir: URL, readOnly: Bool = false) throws -> DiskCache {
        var configuration = DiskCache.Configuration(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4))
        configuration.opensReadOnly = readOnly
        return try DiskCache(directory: dir, configuration: configuration)
    }

    /// Rows of `blobs`, and how many of them no item points at.
    static func blobRows(_ cache: DiskCache) throws -> (count: Int, unreferenced: Int) {
        try cache.index.read { db in
            let count = try db.first("SELECT count(*) FROM blobs") { $0.int(0) } ?? -1
            let unreferenced =
                try db.first("SELECT count(*) FROM blobs WHERE id NOT IN (SELECT blob FROM items WHERE blob IS NOT NULL)") {
                    $0.int(0)
                } ?? -1
            return (count, unreferenced)
        }
    }

    @Test func everyChangeOfAnEntryLeavesOneBlobPerInlineValueAndNoOther() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            for i in 0..<20 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(try Self.blobRows(cache) == (20, 0))
            try cache.store(pattern(900, seed: 100), forKey: "k0")  // inline over inline
            try cache.store(pattern(9000, seed: 101), forKey: "k1")  // a file over inline
            try cache.store(pattern(9000, seed: 102), forKey: "file")
            try cache.store(pattern(800, seed: 103), forKey: "file")  // inline over a file
            try cache.removeData(forKey: "k2")
            #expect(try cache.pin("k3"))  // a pinned value moves to a file with a sidecar
            #expect(try cache.fileURL(forKey: "k4") != nil)  // so does one read as a file
            #expect(try Self.blobRows(cache) == (17, 0))
            #expect(try cache.data(forKey: "k0") == pattern(900, seed: 100))
            #expect(try cache.data(forKey: "k1") == pattern(9000, seed: 101))
            #expect(try cache.data(forKey: "file") == pattern(800, seed: 103))
            #expect(try cache.data(forKey: "k3") == pattern(1000, seed: 3))
            #expect(try cache.data(forKey: "k4") == pattern(1000, seed: 4))
            #expect(try cache.data(forKey: "k5") == pattern(1000, seed: 5))
            try cache.trim(toSize: .bytes(10_000))  // eviction
            let left = try cache.index.read { db in
                try db.first("SELECT count(*) FROM items WHERE file IS NULL") { $0.int(0) }
            }
            #expect(try Self.blobRows(cache) == (left ?? -1, 0))
            try cache.removeAll()
            #expect(try Self.blobRows(cache) == (0, 0))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func newBlobsAreAppendedAfterTheLastOne() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            for i in 0..<50 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            let ids = try cache.index.read { db in
                var ids: [Int64] = []
                try db.query("SELECT blob FROM items JOIN entries USING (id) ORDER BY entries.created, entries.rank") {
                    ids.append($0.int64(0))
                }
                return ids
            }
            // Items sit at random ids; their bytes in the order they were stored.
            #expect(ids == Array(1...50))
        }
    }

    /// Rewrites a cache's index into schema 2's layout: inline bytes in `items.data`.
    static func downgradeToSchema2(_ dir: URL) throws {
        let raw = try DiskIndexHotPathTests.rawIndex(dir)
        defer { raw.close() }
        try raw.execute(
            """
            BEGIN;
            UPDATE items SET data = coalesce(data, (SELECT data FROM blobs WHERE blobs.id = items.blob));
            DROP TRIGGER items_blob_replaced; DROP TRIGGER entries_deleted;
            ALTER TABLE items DROP COLUMN blob;
            DROP TABLE blobs;
            CREATE TRIGGER entries_deleted AFTER DELETE ON entries BEGIN
                UPDATE totals SET size = size - OLD.size, count = count - 1,
                    pinned_size = pinned_size - OLD.pinned * OLD.size, pinned_count = pinned_count - OLD.pinned,
                    main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size,
                    main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0)
                WHERE id = 1;
                DELETE FROM items WHERE id = OLD.id;
            END;
            PRAGMA user_version = 2;
            COMMIT;
            PRAGMA wal_checkpoint(TRUNCATE);
            """)
    }

    @Test func anIndexOfSchemaTwoIsUpgradedInPlaceAndItsValuesReadWhereTheyAre() throws {
        try withTemporaryDirectory { dir in
            var cache = try Self.open(dir)
            for i in 0..<10 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.store(pattern(9000, seed: 50), forKey: "file")
            cache.close()
            try Self.downgradeToSchema2(dir)
            cache = try Self.open(dir)
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 3)
            // Nothing copied on open: the old values are read from `items`.
            #expect(try Self.blobRows(cache) == (0, 0))
            for i in 0..<10 { #expect(try cache.data(forKey: "k\(i)") == pattern(1000, seed: UInt64(i))) }
            #expect(try cache.data(forKey: "file") == pattern(9000, seed: 50))
            try cache.store(pattern(700, seed: 60), forKey: "k0")  // an old entry overwritten
            try cache.store(pattern(700, seed: 61), forKey: "new")
            try cache.removeData(forKey: "k1")
            #expect(try cache.pin("k2"))
            #expect(try cache.data(forKey: "k0") == pattern(700, seed: 60))
            #expect(try cache.data(forKey: "k2") == pattern(1000, seed: 2))
            let legacy = try cache.index.read { db in
                try db.first("SELECT count(*) FROM items WHERE data IS NOT NULL") { $0.int(0) }
            }
            #expect(legacy == 7)  // k3…k9
            #expect(try Self.blobRows(cache) == (2, 0))
            #expect(try cache.verify().isHealthy)
            cache.close()
            // A rebuilt index recovers the old inline values too.
            try Self.downgradeToSchema2(dir)
            cache = try Self.open(dir)
            _ = try cache.rebuildIndex()
            for i in 3..<10 { #expect(try cache.data(forKey: "k\(i)") == pattern(1000, seed: UInt64(i))) }
            #expect(try cache.data(forKey: "new") == pattern(700, seed: 61))
        }
    }

    @Test func aReadOnlyIndexOfSchemaTwoIsReadWithoutAnUpgrade() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            for i in 0..<10 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.store(pattern(9000, seed: 50), forKey: "file")
            cache.close()
            try Self.downgradeToSchema2(dir)
            let reader = try Self.open(dir, readOnly: true)
            for i in 0..<10 { #expect(try reader.data(forKey: "k\(i)") == pattern(1000, seed: UInt64(i))) }
            #expect(try reader.data(forKey: "file") == pattern(9000, seed: 50))
            #expect(try reader.data(forKey: "absent") == nil)
            #expect(try reader.verify().isHealthy)
            reader.close()
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            defer { raw.close() }
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == 2)
        }
    }
}
