import Foundation
import Testing

@testable import Stash

/// Indexes of schema versions 1, 2 and 4, made from a current one, are migrated when opened.
///
/// The committed fixtures of versions 3 and 4 are `IndexMigrationTests`'.
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

    /// Turns a closed version 5 index into version 4's layout: `entries` placed by id with the
    /// policy state in its rows, a narrow `items` beside it and the inline bytes in `blobs`, with
    /// version 4's indexes and triggers.
    ///
    /// The rows are copied before the triggers exist, so the totals stay as they were.
    static let version4 = """
        DROP TRIGGER entries_deleted; DROP TRIGGER entries_pinned; DROP TRIGGER states_inserted;
        DROP TRIGGER states_deleted; DROP TRIGGER states_resized;
        DROP INDEX entries_by_id; DROP INDEX states_by_rank; DROP INDEX entries_by_expiry;
        DROP INDEX entries_by_file; DROP INDEX entries_displaced_keys;
        ALTER TABLE entries RENAME TO entries_v5;
        CREATE TABLE entries (
            id INTEGER PRIMARY KEY, key BLOB NOT NULL, size INTEGER NOT NULL, file TEXT, checksum INTEGER NOT NULL,
            created REAL NOT NULL, accessed REAL NOT NULL, expires REAL, pinned INTEGER NOT NULL DEFAULT 0,
            queue INTEGER NOT NULL DEFAULT 0, rank INTEGER NOT NULL, frequency INTEGER NOT NULL DEFAULT 0,
            content_type TEXT, etag TEXT, last_modified TEXT, extra TEXT, displaced INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO entries SELECT e.id, e.key, e.size, e.file, e.checksum, e.created, s.accessed, e.expires, e.pinned,
            s.queue, s.rank, s.frequency, e.content_type, e.etag, e.last_modified, e.extra, e.displaced
            FROM entries_v5 e JOIN states s ON s.seq = e.seq;
        CREATE TABLE items (
            id INTEGER PRIMARY KEY, key BLOB NOT NULL, size INTEGER NOT NULL, file TEXT,
            checksum INTEGER NOT NULL, expires REAL, pinned INTEGER NOT NULL, blob INTEGER
        );
        CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
        INSERT INTO blobs SELECT seq, data FROM entries_v5 WHERE data IS NOT NULL;
        INSERT INTO items SELECT id, key, size, file, checksum, expires, pinned,
            CASE WHEN data IS NULL THEN NULL ELSE seq END FROM entries_v5;
        DROP TABLE entries_v5; DROP TABLE states;
        CREATE INDEX entries_by_rank ON entries (pinned, queue, rank);
        CREATE INDEX entries_by_expiry ON entries (expires) WHERE expires IS NOT NULL AND pinned = 0;
        CREATE UNIQUE INDEX entries_by_file ON entries (file) WHERE file IS NOT NULL;
        CREATE UNIQUE INDEX entries_displaced_keys ON entries (key) WHERE displaced = 1;
        CREATE TRIGGER entries_inserted AFTER INSERT ON entries BEGIN
            UPDATE totals SET size = size + NEW.size, count = count + 1,
                pinned_size = pinned_size + NEW.pinned * NEW.size, pinned_count = pinned_count + NEW.pinned,
                main_size = main_size + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER entries_deleted AFTER DELETE ON entries BEGIN
            UPDATE totals SET size = size - OLD.size, count = count - 1,
                pinned_size = pinned_size - OLD.pinned * OLD.size, pinned_count = pinned_count - OLD.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0)
            WHERE id = 1;
            DELETE FROM items WHERE id = OLD.id;
        END;
        CREATE TRIGGER entries_resized AFTER UPDATE OF size, pinned, queue ON entries BEGIN
            UPDATE totals SET size = size - OLD.size + NEW.size,
                pinned_size = pinned_size - OLD.pinned * OLD.size + NEW.pinned * NEW.size,
                pinned_count = pinned_count - OLD.pinned + NEW.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size
                    + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0) + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER entries_item_inserted AFTER INSERT ON entries BEGIN
            DELETE FROM items WHERE id = NEW.id;
            INSERT INTO items (id, key, size, file, checksum, expires, pinned)
            VALUES (NEW.id, NEW.key, NEW.size, NEW.file, NEW.checksum, NEW.expires, NEW.pinned);
        END;
        CREATE TRIGGER entries_item_updated
        AFTER UPDATE OF key, size, file, checksum, expires, pinned ON entries BEGIN
            UPDATE items SET key = NEW.key, size = NEW.size, file = NEW.file, checksum = NEW.checksum,
                expires = NEW.expires, pinned = NEW.pinned
            WHERE id = NEW.id;
        END;
        CREATE TRIGGER items_deleted AFTER DELETE ON items WHEN OLD.blob IS NOT NULL BEGIN
            DELETE FROM blobs WHERE id = OLD.blob;
        END;
        CREATE TRIGGER items_blob_replaced AFTER UPDATE OF blob ON items
        WHEN OLD.blob IS NOT NULL AND OLD.blob IS NOT NEW.blob BEGIN
            DELETE FROM blobs WHERE id = OLD.blob;
        END;
        PRAGMA user_version = 4;
        """

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
                \(Self.version4)
                \(Self.entriesOfVersionTwo)
                \(Self.itemsOfVersionThree)
                UPDATE items SET id = 12345 WHERE key = CAST('moved' AS BLOB);
                UPDATE entries SET id = 12345 WHERE key = CAST('moved' AS BLOB);
                UPDATE totals SET displaced = 1;
                PRAGMA user_version = 2;
                """)
            cache = try Self.open(dir)
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 5)
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
                \(Self.version4)
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
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 5)
            // Both kept their version 1 ids, so both are looked up through the key index.
            #expect(try cache.index.read { db in try db.first("SELECT displaced FROM totals") { $0.int(0) } } == 2)
            try cache.removeData(forKey: "inline")
            #expect(try cache.data(forKey: "inline") == nil)
            #expect(try cache.index.read { db in try db.first("SELECT count(*) FROM entries") { $0.int(0) } } == 1)
            #expect(
                try cache.index.read { db in
                    try db.first("SELECT count(*) FROM entries WHERE data IS NOT NULL") { $0.int(0) }
                } == 0)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func anIndexOfSchemaVersionFourKeepsItsDisplacedEntriesAndTheirIds() throws {
        try withTemporaryDirectory { dir in
            var cache = try Self.open(dir, .init(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4)))
            try cache.store(pattern(300, seed: 1), forKey: "home")
            try cache.store(pattern(400, seed: 2), forKey: "moved")
            try cache.store(pattern(9000, seed: 3), forKey: "file")
            cache.close()
            // Version 4 gave a displaced entry the next free rowid: "moved" sits at 12345.
            try Self.rewrite(
                dir,
                """
                \(Self.version4)
                UPDATE items SET id = 12345 WHERE key = CAST('moved' AS BLOB);
                UPDATE entries SET id = 12345, displaced = 1 WHERE key = CAST('moved' AS BLOB);
                UPDATE totals SET displaced = 1;
                """)
            cache = try Self.open(dir, .init(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4)))
            defer { cache.close() }
            #expect(try cache.index.read { db in try db.first("PRAGMA user_version") { $0.int(0) } } == 5)
            #expect(try cache.data(forKey: "home") == pattern(300, seed: 1))
            #expect(try cache.data(forKey: "moved") == pattern(400, seed: 2))
            #expect(try cache.data(forKey: "file") == pattern(9000, seed: 3))
            try cache.store(pattern(500, seed: 4), forKey: "moved")
            #expect(try cache.data(forKey: "moved") == pattern(500, seed: 4))
            let ids = try Self.rows(of: cache, "SELECT key, id FROM entries WHERE displaced = 1") {
                "\(String(decoding: $0.blob(0)!, as: UTF8.self)) \($0.int64(1))"
            }
            #expect(ids == ["moved 12345"])
            #expect(try cache.totalSize.bytes == 300 + 500 + 9000)
            #expect(try cache.verify().isHealthy)
            try cache.removeData(forKey: "moved")
            #expect(try cache.allKeys.sorted() == ["file", "home"])
        }
    }
}
