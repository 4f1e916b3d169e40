import Foundation
import Testing

@testable import Stash

/// Opening a cache written in index schema 3 (inline bytes in `items`' rows) or 4 (a narrow
/// `items` and `blobs`, rows placed by the key's id) migrates it to schema 5 (entries appended
/// with their bytes, found through an index of ids), keeping every entry, pin, time-to-live,
/// metadata and the eviction policy's state; a migration that fails half-way leaves the old
/// schema as it was.
///
/// The fixtures (`Tests/StashTests/Fixtures/schema3-cache` and `schema4-cache`, see the README
/// beside them) were written by each schema's own code.
@Suite struct IndexMigrationTests {
    static func fixture(_ version: Int) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/schema\(version)-cache")
    }

    /// The fixtures' clocks started here; an hour later their one-second entry has expired.
    static let epoch = Date(timeIntervalSince1970: 1_795_651_200)

    static func copyOfFixture(_ version: Int, in parent: URL) throws -> URL {
        let copy = parent.appendingPathComponent("cache")
        try FileManager.default.copyItem(at: fixture(version), to: copy)
        return copy
    }

    /// Opens the cache with the settings the fixtures were written with.
    static func open(_ dir: URL) throws -> DiskCache {
        try DiskCache(
            directory: dir,
            configuration: .init(
                sizeLimit: .kibibytes(384), evictionPolicy: .adaptive, reclaimsOrphansOnOpen: false,
                clock: { epoch.addingTimeInterval(3600) }))
    }

    /// The columns of `entries` every schema since 2 has (schema 5 adds `seq` and `data`, and
    /// moves the access time, queue, rank and frequency to `states`).
    static let entryColumns = [
        "id", "key", "size", "file", "checksum", "created", "accessed", "expires", "pinned", "queue", "rank",
        "frequency", "content_type", "etag", "last_modified", "extra", "displaced",
    ]

    /// Everything the index holds, as text: every column of each entry, its lookup columns with
    /// its inline bytes (from `items.data` in schema 3, from `blobs` in schema 4, from the entry's
    /// row in schema 5), the totals, the ghosts and the frequency sketch.
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
            switch version {
            case 3: try row(of: "items", itemColumns + ["i.data"], from: "items i", order: "i.id")
            case 4:
                try row(
                    of: "items", itemColumns + ["b.data"], from: "items i LEFT JOIN blobs b ON b.id = i.blob",
                    order: "i.id")
            default: try row(of: "entries", itemColumns + ["i.data"], from: "entries i", order: "i.id")
            }
        let entries =
            (version ?? 5) < 5
            ? try row(of: "entries", entryColumns, order: "id")
            : try row(
                of: "entries",
                entryColumns.map { ["accessed", "queue", "rank", "frequency"].contains($0) ? "s.\($0)" : "e.\($0)" },
                from: "entries e JOIN states s ON s.seq = e.seq", order: "e.id")
        var lines: [String] = []
        for (table, sql) in [
            ("entry", entries), ("item", items),
            ("totals", try row(of: "totals", order: "id")),
            ("ghost", try row(of: "ghosts", order: "fingerprint")), ("sketch", try row(of: "sketch", order: "chunk")),
        ] {
            try raw.query(sql) { lines.append("\(table) \($0.text(0) ?? "NULL")") }
        }
        return lines
    }

    /// What each fixture holds: entries, sketch chunks, its totals row, and when its ten-year
    /// entry expires (the writer's clock advanced with every call, which the schemas made
    /// differently).
    static let expected: [Int: (entries: Int, totals: String, ttlExpires: Double, triggers: Int)] = [
        3: (150, "totals 1|441159|150|50900|2|192614|80|1990|0|0|'adaptive'|0", 1_795_651_326.5, 7),
        4: (151, "totals 1|441424|151|50900|2|192442|80|1991|0|0|'adaptive'|0", 1_795_651_324.75, 9),
    ]

    @Test(arguments: [3, 4]) func theFixtureIsAnIndexOfItsSchemaWithInlineAndFileValues(version: Int) throws {
        let lines = try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(version, in: parent)
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == version)
            raw.close()
            return try Self.contents(of: dir)
        }
        let expected = Self.expected[version]!
        #expect(lines.filter { $0.hasPrefix("entry ") }.count == expected.entries)
        #expect(lines.filter { $0.hasPrefix("item ") }.count == expected.entries)
        #expect(lines.filter { $0.hasPrefix("sketch ") }.count == 17)
        #expect(lines.contains(expected.totals))
    }

    @Test(arguments: [3, 4])
    func openingTheFixtureMigratesEveryEntryPinTimeToLiveMetadataAndThePolicyState(version: Int) throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(version, in: parent)
            let before = try Self.contents(of: dir)
            var cache = try Self.open(dir)
            cache.close()
            // Nothing but the layout changed: every row, byte, total and the sketch read back the same.
            #expect(try Self.contents(of: dir) == before)
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == 5)
            #expect(
                try raw.first(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('items', 'blobs', 'entries_v4')"
                ) { $0.int(0) } == 0)
            // Every entry has its state, and nothing else does.
            #expect(
                try raw.first(
                    "SELECT (SELECT count(*) FROM entries) = (SELECT count(*) FROM states JOIN entries USING (seq))"
                ) {
                    $0.int(0)
                } == 1)
            #expect(try raw.first("SELECT count(*) FROM states") { $0.int(0) } == Self.expected[version]!.entries)
            // Every inline value's bytes are in its row, and only there.
            #expect(
                try raw.first("SELECT count(*) FROM entries WHERE (file IS NULL) = (data IS NULL)") { $0.int(0) } == 0)
            #expect(try raw.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
            raw.close()

            cache = try Self.open(dir)
            defer { cache.close() }
            let keys = try cache.allKeys
            #expect(keys.count == Self.expected[version]!.entries)
            for key in keys where key.hasPrefix("entry-") {
                let n = Int(key.dropFirst("entry-".count))!
                let size = n % 25 == 7 ? 40_000 : 200 + (n * 37) % 1800
                #expect(try cache.data(forKey: key) == SeededValue.make(size, seed: UInt64(1000 + n)), "\(key)")
            }
            #expect(try cache.data(forKey: "pinned-inline") == SeededValue.make(900, seed: 1))
            #expect(try cache.data(forKey: "pinned-file") == SeededValue.make(50_000, seed: 2))
            #expect(try cache.attributes(forKey: "pinned-inline")?.isPinned == true)
            #expect(try cache.attributes(forKey: "pinned-file")?.isPinned == true)
            #expect(try cache.data(forKey: "ttl-inline") == SeededValue.make(700, seed: 3))
            #expect(try cache.data(forKey: "ttl-file") == SeededValue.make(45_000, seed: 4))
            let tenYears = 86_400.0 * 3650
            #expect(
                try cache.attributes(forKey: "ttl-inline")?.expires
                    == Date(timeIntervalSince1970: Self.expected[version]!.ttlExpires + tenYears))
            #expect(try cache.data(forKey: "expired") == nil)
            let metadata = try cache.attributes(forKey: "metadata ünïcode/key?")?.metadata
            #expect(
                metadata
                    == DiskCache.Metadata(
                        contentType: "image/png", etag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 10:00:00 GMT",
                        extra: ["vary": "accept", "x-origin": "fixture"]))
            #expect(try cache.data(forKey: "metadata ünïcode/key?") == SeededValue.make(1500, seed: 6))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test(arguments: [3, 4]) func aMigratedCacheStoresEvictsAndRemovesThroughTheNewTable(version: Int) throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(version, in: parent)
            let cache = try Self.open(dir)
            for i in 0..<200 { try cache.store(SeededValue.make(1500, seed: UInt64(5000 + i)), forKey: "new-\(i)") }
            try cache.store(SeededValue.make(800, seed: 77), forKey: "ttl-inline")  // a replacement
            try cache.removeData(forKey: "ttl-file")
            try cache.flush()
            // The limit holds for what may be evicted: all but the two pinned values (50 900 bytes).
            #expect(try cache.totalSize.bytes - 50_900 <= ByteCount.kibibytes(384).bytes)
            #expect(try cache.data(forKey: "new-199") == SeededValue.make(1500, seed: 5199))
            #expect(try cache.data(forKey: "pinned-inline") == SeededValue.make(900, seed: 1))
            #expect(try cache.data(forKey: "pinned-file") == SeededValue.make(50_000, seed: 2))
            #expect(try cache.data(forKey: "ttl-file") == nil)
            #expect(try cache.verify().isHealthy)  // the totals match the rows
            cache.close()
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            defer { raw.close() }
            // The replacement took the old row's place: one row per key.
            #expect(
                try raw.first("SELECT count(*) FROM (SELECT key FROM entries GROUP BY key HAVING count(*) > 1)") {
                    $0.int(0)
                } == 0)
        }
    }

    @Test(arguments: [3, 4]) func aReadOnlyOpenOfAnOldSchemaSaysItNeedsAnUpgradeAndChangesNothing(version: Int) throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(version, in: parent)
            let before = try Self.contents(of: dir)
            var configuration = DiskCache.Configuration(sizeLimit: .kibibytes(384))
            configuration.opensReadOnly = true
            #expect {
                _ = try DiskCache(directory: dir, configuration: configuration)
            } throws: { error in
                let error = error as? StashError
                return error?.code == .readOnly && error?.message.contains("schema \(version)") == true
                    && error?.message.contains("write permission") == true
            }
            #expect(try Self.contents(of: dir) == before)
        }
    }

    @Test(arguments: [3, 4]) func aMigrationThatFailsHalfWayLeavesTheOldSchemaAsItWas(version: Int) throws {
        try withTemporaryDirectory { parent in
            let dir = try Self.copyOfFixture(version, in: parent)
            let before = try Self.contents(of: dir)
            // A table in the way of the rename makes the migration fail after it dropped the
            // triggers and indexes: all of it must roll back.
            try DiskIndexHotPathTests.rewrite(dir, "CREATE TABLE entries_v4 (obstacle INTEGER);")
            #expect(throws: StashError.self) { _ = try Self.open(dir) }
            #expect(try Self.contents(of: dir) == before)
            let raw = try DiskIndexHotPathTests.rawIndex(dir)
            #expect(try raw.first("PRAGMA user_version") { $0.int(0) } == version)
            #expect(
                try raw.first("SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'seq'") { $0.int(0) } == 0
            )
            #expect(
                try raw.first("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") { $0.int(0) }
                    == Self.expected[version]!.triggers)
            #expect(
                try raw.first("SELECT count(*) FROM sqlite_master WHERE name = 'entries_by_rank'") { $0.int(0) } == 1)
            raw.close()
            // With the obstacle gone, the next open migrates everything.
            try DiskIndexHotPathTests.rewrite(dir, "DROP TABLE entries_v4;")
            let cache = try Self.open(dir)
            cache.close()
            #expect(try Self.contents(of: dir) == before)
        }
    }
}
