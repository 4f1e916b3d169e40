extension DiskIndex {
    /// The tables: two rows per entry, both under one id derived from a hash of the key, and
    /// the bytes of an inline value in a third, appended in the order they were stored.
    ///
    /// See `DiskCache.entryID(forKey:)` for the id.
    ///
    /// * `items` is the narrow index: what a lookup needs (key, size, file, checksum, expiry,
    ///   pin) and the row of `blobs` holding an inline value's bytes, so that a miss reads a
    ///   table of ~60 bytes per entry (1 GB at a million 1 KiB entries when the bytes were in
    ///   its rows). It is written when a value is stored or removed, never by a hit.
    /// * `blobs` holds inline bytes under ids that SQLite allocates past the largest one, so
    ///   a batch of stores appends to a few pages instead of dirtying a random page of a wide
    ///   table per store.
    /// * `entries` holds the eviction policy's state, the times and the metadata, and is what
    ///   the batched writes of hits change; those writes never dirty a page a read uses.
    ///
    /// A key is found at its id, so `entries` has no index of keys: a store or a removal then
    /// writes one B-tree fewer (a 1 KiB store took 15 % less time at 10 000 and 100 000
    /// entries). An entry whose id was taken by another key when it was stored (a hash
    /// collision, or an entry of schema 1) lives under another id with `displaced = 1`, and
    /// only those are indexed by key (`entries_displaced_keys`, which also keeps them unique).
    /// Nothing else may insert into `entries`: the store and the index rebuild keep each key in
    /// one row.
    ///
    /// Triggers keep `items` in step with `entries`, and the totals (size, count, pinned and
    /// queue sizes) in a one-row table, so that opening a cache reads one row instead of
    /// scanning.
    static let schema = """
        CREATE TABLE IF NOT EXISTS entries (
            id INTEGER PRIMARY KEY,
            key BLOB NOT NULL,
            size INTEGER NOT NULL,
            file TEXT,
            checksum INTEGER NOT NULL,
            created REAL NOT NULL,
            accessed REAL NOT NULL,
            expires REAL,
            pinned INTEGER NOT NULL DEFAULT 0,
            queue INTEGER NOT NULL DEFAULT 0,
            rank INTEGER NOT NULL,
            frequency INTEGER NOT NULL DEFAULT 0,
            content_type TEXT,
            etag TEXT,
            last_modified TEXT,
            extra TEXT,
            displaced INTEGER NOT NULL DEFAULT 0
        );
        \(itemsTable)
        CREATE TABLE IF NOT EXISTS totals (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            size INTEGER NOT NULL, count INTEGER NOT NULL,
            pinned_size INTEGER NOT NULL, pinned_count INTEGER NOT NULL,
            main_size INTEGER NOT NULL, main_count INTEGER NOT NULL,
            clock INTEGER NOT NULL, hand INTEGER NOT NULL, ghosts INTEGER NOT NULL, policy TEXT,
            displaced INTEGER NOT NULL DEFAULT 0
        );
        INSERT OR IGNORE INTO totals VALUES (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0);
        CREATE TABLE IF NOT EXISTS ghosts (fingerprint INTEGER PRIMARY KEY, rank INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS ghosts_by_rank ON ghosts (rank);
        CREATE INDEX IF NOT EXISTS entries_by_rank ON entries (pinned, queue, rank);
        CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries (expires) WHERE expires IS NOT NULL AND pinned = 0;
        CREATE UNIQUE INDEX IF NOT EXISTS entries_by_file ON entries (file) WHERE file IS NOT NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS entries_displaced_keys ON entries (key) WHERE displaced = 1;
        CREATE TRIGGER IF NOT EXISTS entries_inserted AFTER INSERT ON entries BEGIN
            UPDATE totals SET size = size + NEW.size, count = count + 1,
                pinned_size = pinned_size + NEW.pinned * NEW.size, pinned_count = pinned_count + NEW.pinned,
                main_size = main_size + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS entries_deleted AFTER DELETE ON entries BEGIN
            UPDATE totals SET size = size - OLD.size, count = count - 1,
                pinned_size = pinned_size - OLD.pinned * OLD.size, pinned_count = pinned_count - OLD.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0)
            WHERE id = 1;
            DELETE FROM items WHERE id = OLD.id;
        END;
        CREATE TRIGGER IF NOT EXISTS entries_resized AFTER UPDATE OF size, pinned, queue ON entries BEGIN
            UPDATE totals SET size = size - OLD.size + NEW.size,
                pinned_size = pinned_size - OLD.pinned * OLD.size + NEW.pinned * NEW.size,
                pinned_count = pinned_count - OLD.pinned + NEW.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size
                    + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0) + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS ghost_added AFTER INSERT ON ghosts BEGIN
            UPDATE totals SET ghosts = ghosts + 1 WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS ghost_removed AFTER DELETE ON ghosts BEGIN
            UPDATE totals SET ghosts = ghosts - 1 WHERE id = 1;
        END;
        \(sketchTable)
        PRAGMA user_version = 4;
        """

    /// The read side of each entry, the table of inline bytes, and the triggers that copy
    /// `entries`' columns into `items` and drop an item's bytes with it.
    ///
    /// `blob` is set by the store itself (NULL for a value kept in a file). An insert into
    /// `entries` first deletes a leftover item under its id, so that the item's bytes go with
    /// it (a REPLACE would skip `items_deleted`).
    static let itemsTable = """
        CREATE TABLE IF NOT EXISTS items (
            id INTEGER PRIMARY KEY,
            key BLOB NOT NULL,
            size INTEGER NOT NULL,
            file TEXT,
            checksum INTEGER NOT NULL,
            expires REAL,
            pinned INTEGER NOT NULL,
            blob INTEGER
        );
        CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
        CREATE TRIGGER IF NOT EXISTS entries_item_inserted AFTER INSERT ON entries BEGIN
            DELETE FROM items WHERE id = NEW.id;
            INSERT INTO items (id, key, size, file, checksum, expires, pinned)
            VALUES (NEW.id, NEW.key, NEW.size, NEW.file, NEW.checksum, NEW.expires, NEW.pinned);
        END;
        CREATE TRIGGER IF NOT EXISTS entries_item_updated
        AFTER UPDATE OF key, size, file, checksum, expires, pinned ON entries BEGIN
            UPDATE items SET key = NEW.key, size = NEW.size, file = NEW.file, checksum = NEW.checksum,
                expires = NEW.expires, pinned = NEW.pinned
            WHERE id = NEW.id;
        END;
        CREATE TRIGGER IF NOT EXISTS items_deleted AFTER DELETE ON items WHEN OLD.blob IS NOT NULL BEGIN
            DELETE FROM blobs WHERE id = OLD.blob;
        END;
        CREATE TRIGGER IF NOT EXISTS items_blob_replaced AFTER UPDATE OF blob ON items
        WHEN OLD.blob IS NOT NULL AND OLD.blob IS NOT NEW.blob BEGIN
            DELETE FROM blobs WHERE id = OLD.blob;
        END;
        """

    /// Version 1 kept inline bytes in a table of their own and had no `items`: build `items`
    /// and `blobs` from `entries` and `inline`, keeping every id (entries of version 1 are then
    /// found through the key index, and all count as displaced; their ids were allocated in
    /// order, so the bytes keep them).
    static let migrationFromVersion1 = """
        ALTER TABLE totals ADD COLUMN displaced INTEGER NOT NULL DEFAULT 0;
        UPDATE totals SET displaced = (SELECT count(*) FROM entries) WHERE id = 1;
        DROP TRIGGER IF EXISTS entries_deleted;
        \(itemsTable)
        INSERT INTO blobs (id, data) SELECT id, data FROM inline WHERE id IN (SELECT id FROM entries);
        INSERT INTO items (id, key, size, file, checksum, expires, pinned, blob)
            SELECT e.id, e.key, e.size, e.file, e.checksum, e.expires, e.pinned, b.id
            FROM entries e LEFT JOIN blobs b ON b.id = e.id;
        DROP TABLE inline;
        """

    /// Version 2's entries gain the `displaced` flag; their unique index of keys stays.
    ///
    /// A store keeps that index up to date, and a unique key index is still right. If the
    /// index held any entry away from its key's id, every entry is flagged (not worth hashing
    /// every key for: flagged entries at their own id are still found there first).
    static let migrationFromVersion2 = """
        ALTER TABLE entries ADD COLUMN displaced INTEGER NOT NULL DEFAULT 0;
        UPDATE entries SET displaced = 1 WHERE (SELECT displaced FROM totals WHERE id = 1) > 0;
        """

    /// Versions 2 and 3 kept inline bytes in `items`' rows (`data`): move them into `blobs`,
    /// numbered in the order of the items' ids, and rebuild `items` without them.
    ///
    /// The triggers that name `items` are dropped first (a rename would rewrite them to name
    /// the old table) and come back with the schema. Like every migration, it runs in the
    /// transaction that opens the index, so a crash or an error leaves version 3 as it was.
    static let migrationFromVersion3 = """
        DROP TRIGGER IF EXISTS entries_deleted;
        DROP TRIGGER IF EXISTS entries_item_inserted;
        DROP TRIGGER IF EXISTS entries_item_updated;
        ALTER TABLE items RENAME TO items_v3;
        \(itemsTable)
        INSERT INTO blobs (id, data)
            SELECT n, data FROM (SELECT row_number() OVER (ORDER BY id) AS n, data FROM items_v3)
            WHERE data IS NOT NULL;
        INSERT INTO items (id, key, size, file, checksum, expires, pinned, blob)
            SELECT id, key, size, file, checksum, expires, pinned,
                CASE WHEN data IS NULL THEN NULL ELSE row_number() OVER (ORDER BY id) END
            FROM items_v3;
        DROP TABLE items_v3;
        """

    /// TinyLFU's frequency sketch: chunk -1 is a header (generation, word count, additions),
    /// chunks 0… hold `FrequencySketch.wordsPerChunk` little-endian words each.
    static let sketchTable = """
        CREATE TABLE IF NOT EXISTS sketch (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
        """
}
