import Foundation
import Testing

@testable import Stash

/// Opening a cache written in index schema 3 (inline bytes in `items`' rows) migrates it to the
/// narrow index of schema 4, keeping every entry, pin, time-to-live, metadata and the eviction
/// policy's state; a migration that fails half-way leaves schema 3 as it was.
///
/// The fixture (`Tests/StashTests/Fixtures/schema3-cache`, see the README beside it) was written
/// by schema 3's own code.
@Suite struct IndexMigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema3-cache")

    /// The fixture's clock started here; an hour later its one-second entry has expired.
    static let epoch = Date(timeIntervalSince1970: 1_795_651_200)

    static func copyOfFixture(in parent: URL) throws -> URL {
        let copy = parent.appendingPathComponent("cache")
        try FileManager.default.copyItem(at: fixture, to: copy)
        return copy
    }

    /// Opens the cache with the settings the fixture was written with.
    static func open(_ dir: URL) throws -> DiskCache {
        try DiskCache(
            directory: dir,
            configuration: .init(
                sizeLimit: .kibibytes(384), evictionPolicy: .adaptive, reclaimsOrphansOnOpen: false,
                clock: { epoch.addingTimeInterval(3600) }))
    }

    /// Everything the index holds, as text: every column of `entries`, each item with its inline
    /// bytes (from `items.data` in schema 3, from `blobs` in schema 4), the totals, the ghosts
    /// and the frequency sketch.
    static func contents(of dir: URL) throws -> [String] {
        let raw = try DiskIndexHotPathTests.rawIndex(dir)
        defer { raw.close() }
        let version = try raw.first("PRAGMA user_version") { $0.int(0) }
        // Every column as an SQL literal (`quote`), so that a changed byte or type shows.
        func row(of table: String, _ columns: [String]? = nil, from: String? = nil, order: String) throws -> String {
            var names = columns ?? []
            if columns == nil {
                try raw.query("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid") {
                    names.append($0.text(0)!)
                }
            }
            let list = names.map { "quote(\($0))" }.joined(separator: " || '|' || ")
            return "SELECT \(list) FROM \(from ?? table) ORDER BY \(order)"
        }
        let itemColumns = ["i.id", "i.key", "i.size", "i.file", "i.checksum", "i.expires", "i.pinned"]
        let items =
            version == 3
            ? try row(of: "items", itemColumns + ["i.data"], from: "items i", order: "i.id")
            : try row(
                of: "items", itemColumns + ["b.data"], from: "items i LEFT JOIN blobs b ON b.id = i.blob", order: "i.id"
            )
        var lines: [String] = []
        for (table, sql) in [
            ("entry", try row(of: "entries", order: "id")), ("item", items),
            ("totals", try row(of: "totals", order: "id")),
            ("ghost", try row(of: "ghosts", order: "fingerprint")), ("sketch", try row(of: "sketch", order: "chunk")),
        ] {
            try raw.query(sql) { lines.append("\(table) \($0.text(0) ?? "NULL")") }
        }
        return lines
    }

    /// A value of the fixture writer: 8 bytes of seed, then an xorshift stream from it.
    static func value(_ count: Int, seed: UInt64) -> Data {
        var data = Data(count: max(count, 8))
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.storeBytes(of: seed.littleEndian, as: UInt64.self)
            var state = seed | 1
            for i in 8..<buffer.count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    @Test func theFixtureIsAnIndexOfSchemaThreeWithInlineAndFileValues() throws {
        let lines = try withTemporaryDirectory { parent in try Self.contents(of: try Self.copyOfFixture(in: parent)) }
        #expect(lines.filter { $0.hasPrefix("entry ") }.count == 150)
        #expect(lines.filter { $0.hasPrefix("item ") }.count == 150)
        #expect(lines.filter { $0.hasPrefix("sketch ") }.count == 17)
        #expect(lines.contains("totals 1|441159|150|50900|2|192614|80|1990|0|0|'adaptive'|0"))
    }

    @Test func openingTheFixtureMigratesEveryEntryPinTimeToLiveMetadataAndThePolicyState() throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(in: parent)
            let before = try Self.contents(of: dir)
            var cache = try Self.open(dir)
            cache.close()
            // Nothing but the layout changed: every row, byte, total and the sketch read back the same.
            #expect(try Self.contents(of: dir) == before)
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == 4)
            #expect(
                try raw.first("SELECT count(*) FROM pragma_table_info('items') WHERE name = 'data'") { $0.int(0) } == 0)
            // The inline bytes moved to `blobs`, one row each, none left over.
            let blobs = try raw.first("SELECT count(*) FROM blobs") { $0.int(0) }
            #expect(try blobs == raw.first("SELECT count(*) FROM items WHERE blob IS NOT NULL") { $0.int(0) })
            #expect(try raw.first("SELECT count(*) FROM items WHERE file IS NULL AND blob IS NULL") { $0.int(0) } == 0)
            raw.close()

            cache = try Self.open(dir)
            defer { cache.close() }
            let keys = try cache.allKeys
            #expect(keys.count == 150)
            for key in keys where key.hasPrefix("entry-") {
                let n = Int(key.dropFirst("entry-".count))!
                let size = n % 25 == 7 ? 40_000 : 200 + (n * 37) % 1800
                #expect(try cache.data(forKey: key) == Self.value(size, seed: UInt64(1000 + n)), "\(key)")
            }
            #expect(try cache.data(forKey: "pinned-inline") == Self.value(900, seed: 1))
            #expect(try cache.data(forKey: "pinned-file") == Self.value(50_000, seed: 2))
            #expect(try cache.attributes(forKey: "pinned-inline")?.isPinned == true)
            #expect(try cache.attributes(forKey: "pinned-file")?.isPinned == true)
            #expect(try cache.data(forKey: "ttl-inline") == Self.value(700, seed: 3))
            #expect(try cache.data(forKey: "ttl-file") == Self.value(45_000, seed: 4))
            let tenYears = 86_400.0 * 3650
            #expect(
                try cache.attributes(forKey: "ttl-inline")?.expires
                    == Date(timeIntervalSince1970: 1_795_651_326.5 + tenYears))
            #expect(try cache.data(forKey: "expired") == nil)
            let metadata = try cache.attributes(forKey: "metadata ünïcode/key?")?.metadata
            #expect(
                metadata
                    == DiskCache.Metadata(
                        contentType: "image/png", etag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 10:00:00 GMT",
                        extra: ["vary": "accept", "x-origin": "fixture"]))
            #expect(try cache.data(forKey: "metadata ünïcode/key?") == Self.value(1500, seed: 6))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func aMigratedCacheStoresEvictsAndRemovesThroughTheNewTables() throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(in: parent)
            let cache = try Self.open(dir)
            for i in 0..<200 { try cache.store(Self.value(1500, seed: UInt64(5000 + i)), forKey: "new-\(i)") }
            try cache.removeData(forKey: "ttl-inline")
            try cache.flush()
            // The limit holds for what may be evicted: all but the two pinned values (50 900 bytes).
            #expect(try cache.totalSize.bytes - 50_900 <= ByteCount.kibibytes(384).bytes)
            #expect(try cache.data(forKey: "new-199") == Self.value(1500, seed: 5199))
            #expect(try cache.data(forKey: "pinned-inline") == Self.value(900, seed: 1))
            #expect(try cache.data(forKey: "pinned-file") == Self.value(50_000, seed: 2))
            #expect(try cache.data(forKey: "ttl-inline") == nil)
            cache.close()
            // Evicted and removed entries took their bytes with them.
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            defer { raw.close() }
            let blobs = try raw.first("SELECT count(*) FROM blobs") { $0.int(0) }
            #expect(try blobs == raw.first("SELECT count(*) FROM items WHERE blob IS NOT NULL") { $0.int(0) })
            #expect(
                try raw.first(
                    "SELECT count(*) FROM blobs WHERE id NOT IN (SELECT blob FROM items WHERE blob IS NOT NULL)"
                ) {
                    $0.int(0)
                } == 0)
        }
    }

    @Test func verifyFindsAndRepairsInlineBytesThatNoEntryRefersTo() throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(in: parent)
            var cache = try Self.open(dir)
            cache.close()
            try DiskIndexHotPathTests.rewrite(dir, "INSERT INTO blobs (data) VALUES (x'00112233');")
            cache = try Self.open(dir)
            defer { cache.close() }
            let report = try cache.verify()
            #expect(report.indexProblems == ["1 inline values that no entry refers to"])
            #expect(try cache.verify(repair: true).repaired)
            #expect(try cache.verify().isHealthy)
            #expect(try cache.data(forKey: "ttl-inline") == Self.value(700, seed: 3))
        }
    }

    @Test func aReadOnlyOpenOfSchemaThreeSaysItNeedsAnUpgradeAndChangesNothing() throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(in: parent)
            let before = try Self.contents(of: dir)
            var configuration = DiskCache.Configuration(sizeLimit: .kibibytes(384))
            configuration.opensReadOnly = true
            #expect {
                _ = try DiskCache(directory: dir, configuration: configuration)
            } throws: { error in
                let error = error as? StashError
                return error?.code == .readOnly && error?.message.contains("schema 3") == true
                    && error?.message.contains("write permission") == true
            }
            #expect(try Self.contents(of: dir) == before)
        }
    }

    @Test func aMigrationThatFailsHalfWayLeavesSchemaThreeAsItWas() throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(in: parent)
            let before = try Self.contents(of: dir)
            // A table in the way of the rename makes the migration fail after it dropped the
            // triggers and filled `blobs`: all of it must roll back.
            try DiskIndexHotPathTests.rewrite(dir, "CREATE TABLE items_v3 (obstacle INTEGER);")
            #expect(throws: StashError.self) { _ = try Self.open(dir) }
            #expect(try Self.contents(of: dir) == before)
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == 3)
            #expect(try raw.first("SELECT count(*) FROM sqlite_master WHERE name = 'blobs'") { $0.int(0) } == 0)
            #expect(try raw.first("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") { $0.int(0) } == 7)
            raw.close()
            // With the obstacle gone, the next open migrates everything.
            try DiskIndexHotPathTests.rewrite(dir, "DROP TABLE items_v3;")
            let cache = try Self.open(dir)
            cache.close()
            #expect(try Self.contents(of: dir) == before)
        }
    }
}
