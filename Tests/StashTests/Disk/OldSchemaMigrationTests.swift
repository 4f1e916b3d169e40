import Foundation
import Testing

@testable import Stash

/// Indexes of schema versions 1 and 2, made from a current one, are migrated when opened.
///
/// The committed fixture of version 3 is `IndexMigrationTests`'.
@Suite struct OldSchemaMigrationTests {
    static func open(_ dir: URL, _ configuration: DiskCache.Configuration = .init(sizeLimit: .megabytes(50)))
        throws -> DiskCache
    {
        try DiskIndexHotPathTests.open(dir, configuration)
    }

    static func rewrite(_ dir: URL, _ sql: String) throws {
        try DiskIndexHotPathTests.rewrite(dir, sql)
    }

    static func rows<T>(of cache: DiskCache, _ sql: String, _ map: (SQLiteRow) -> T) throws -> [T] {
        try DiskIndexHotPathTests.rows(of: cache, sql, map)
    }

    /// Turns version 4's `items` and `blobs` into version 3's `items`, whose rows carried the
    /// inline bytes, with version 3's triggers.
    static let itemsOfVersionThree = """
        DROP TRIGGER entries_item_inserted; DROP TRIGGER entries_item_updated;
        DROP TRIGGER items_deleted; DROP TRIGGER items_blob_replaced;
        ALTER TABLE items ADD COLUMN data BLOB;
        UPDATE items SET data = (SELECT data FROM blobs WHERE id = items.blob);
        ALTER TABLE items DROP COLUMN blob;
        DROP TABLE blobs;
        CREATE TRIGGER entries_item_inserted AFTER INSERT ON entries BEGIN
            INSERT OR REPLACE INTO items (id, key, size, file, checksum, expires, pinned)
            VALUES (NEW.id, NEW.key, NEW.size, NEW.file, NEW.checksum, NEW.expires, NEW.pinned);
        END;
        CREATE TRIGGER entries_item_updated
        AFTER UPDATE OF key, size, file, checksum, expires, pinned ON entries BEGIN
            UPDATE items SET key = NEW.key, size = NEW.size, file = NEW.file, checksum = NEW.checksum,
                expires = NEW.expires, pinned = NEW.pinned
            WHERE id = NEW.id;
        END;
        """

    /// Turns a version 3 or 4 `entries` table into versions 1 and 2's: a unique index of keys, no
    /// `displaced` column.
    static let entriesOfVersionTwo = """
        DROP INDEX entries_displaced_keys;
        ALTER TABLE entries DROP COLUMN displaced;
        CREATE UNIQUE INDEX entries_unique_keys ON entries (key);
        """

    @Test func anIndexOfSchemaVersionTwoIsMigratedWithItsKeyIndexAndDisplacedEntries() throws {
        try withTemporaryDirectory { dir in
            var cache = try Self.open(dir)
            try cache.store(pattern(300, seed: 1), forKey: "home")
            try cache.store(pattern(400, seed: 2), forKey: "moved")
            cache.close()
            // Version 2's layout: a unique index of keys, no `displaced` column; "moved" sits away
            // from its key's id, as a collision would have put it.
            try Self.rewrite(
                dir,
                """
                \(Self.entriesOfVersionTwo)
                \(Self.itemsOfVersionThree)
                UPDATE items SET id = 12345 WHERE key = CAST('moved' AS BLOB);
                UPDATE entries SET id = 12345 WHERE key = CAST('moved' AS BLOB);
                UPDATE totals SET displaced = 1;
                PRAGMA user_version = 2;
                """)
            cache = try Self.open(dir)
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 4)
            #expect(try cache.data(forKey: "home") == pattern(300, seed: 1))
            #expect(try cache.data(forKey: "moved") == pattern(400, seed: 2))
            // Replacing and removing find the displaced entry; a new key lands at its own id.
            try cache.store(pattern(500, seed: 3), forKey: "moved")
            #expect(try cache.data(forKey: "moved") == pattern(500, seed: 3))
            try cache.store(pattern(600, seed: 4), forKey: "new")
            let ids = try Self.rows(of: cache, "SELECT key, id FROM entries ORDER BY key") {
                "\(String(decoding: $0.blob(0)!, as: UTF8.self)) \($0.int64(1))"
            }
            #expect(
                ids == [
                    "home \(DiskCache.entryID(forKey: Data("home".utf8)))", "moved 12345",
                    "new \(DiskCache.entryID(forKey: Data("new".utf8)))",
                ])
            try cache.removeData(forKey: "moved")
            #expect(try cache.data(forKey: "moved") == nil)
            #expect(try cache.allKeys.sorted() == ["home", "new"])
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func anIndexOfSchemaVersionOneIsMigratedWithItsValues() throws {
        try withTemporaryDirectory { dir in
            var cache = try Self.open(dir, .init(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4)))
            try cache.store(pattern(1000, seed: 1), forKey: "inline")
            try cache.store(pattern(9000, seed: 2), forKey: "file")
            cache.close()
            // Turn it into version 1's layout: inline bytes in `inline`, no `items`, no `displaced`.
            try Self.rewrite(
                dir,
                """
                \(Self.entriesOfVersionTwo)
                CREATE TABLE inline (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
                INSERT INTO inline SELECT i.id, b.data FROM items i JOIN blobs b ON b.id = i.blob;
                DROP TRIGGER entries_item_inserted; DROP TRIGGER entries_item_updated; DROP TRIGGER entries_deleted;
                DROP TABLE items; DROP TABLE blobs;
                ALTER TABLE totals DROP COLUMN displaced;
                CREATE TRIGGER entries_deleted AFTER DELETE ON entries BEGIN
                    UPDATE totals SET size = size - OLD.size, count = count - 1 WHERE id = 1;
                    DELETE FROM inline WHERE id = OLD.id;
                END;
                UPDATE entries SET id = id / 2;
                UPDATE inline SET id = id / 2;
                PRAGMA user_version = 1;
                """)
            cache = try Self.open(dir, .init(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4)))
            #expect(try cache.data(forKey: "inline") == pattern(1000, seed: 1))
            #expect(try cache.data(forKey: "file") == pattern(9000, seed: 2))
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 4)
            // Both kept their version 1 ids, so both are looked up through the key index.
            #expect(try cache.index.read { db in try db.first("SELECT displaced FROM totals") { $0.int(0) } } == 2)
            try cache.removeData(forKey: "inline")  // the new triggers keep `items` in step
            #expect(try cache.data(forKey: "inline") == nil)
            #expect(try cache.index.read { db in try db.first("SELECT count(*) FROM items") { $0.int(0) } } == 1)
            #expect(try cache.index.read { db in try db.first("SELECT count(*) FROM blobs") { $0.int(0) } } == 0)
            #expect(try cache.verify().isHealthy)
        }
    }

}
