extension DiskIndex {
    /// The tables: one row per entry in `entries`, appended in the order the entries were
    /// stored, with an inline value's bytes in the row itself (python-diskcache's layout), and
    /// its eviction policy's state in a narrow row of `states` under the same number.
    ///
    /// * `seq` is the row number, which SQLite allocates past the largest one: a batch of
    ///   stores appends to a few pages at the end of both tables instead of dirtying a random
    ///   page per store (schema 4 placed its rows by the key's hash, and a 1 KiB store dirtied
    ///   1.73 pages at 100 000 entries and 2.83 at a million; this layout about 0.6 and 1.3, see
    ///   `Benchmarks/python/index_pages.py`). A replaced value is a new row at the end, and its
    ///   old row is deleted.
    /// * `id` is the key's id (see `DiskCache.entryID(forKey:)`) under a unique index
    ///   (`entries_by_id`): a lookup is one descent of that narrow index (about 20 bytes per
    ///   entry, so that a miss at a million entries touches a small, hot B-tree) and one of
    ///   the table. Statements find an entry by `id`, and its state by the entry's `seq`.
    /// * `states` holds what the batched writes of hits change (access time, queue, rank,
    ///   frequency), with the size and pin that the totals and the eviction order need, so
    ///   that those writes never dirty a page a read uses: with the state in the wide rows, a
    ///   hit's write put the entry's page (and its bytes) into the WAL, where the next reads
    ///   of it went through `pread` instead of the map (hits at 1 000 entries took 1.5-4.0 µs
    ///   before, 3.0-4.3 µs so, and the hit records written on close 2-7 times as long).
    ///
    /// A key is found at its id, so `entries` has no index of keys: a store or a removal then
    /// writes one B-tree fewer (a 1 KiB store took 15 % less time at 10 000 and 100 000
    /// entries). An entry whose id was taken by another key when it was stored (a hash
    /// collision, or an entry of schema 1) lives under another id with `displaced = 1` (a
    /// negative one since schema 5, `-1 - seq` of its first row, which no key's id can equal),
    /// and only those are indexed by key (`entries_displaced_keys`, which also keeps them
    /// unique). Nothing else may insert into `entries`: the store and the index rebuild keep
    /// each key in one row, and write its `states` row beside it.
    ///
    /// Triggers delete an entry's state with it, copy its pin into the state, and keep the
    /// totals (size, count, pinned and queue sizes) in a one-row table from `states`, so that
    /// opening a cache reads one row instead of scanning. They fire on every insert and
    /// delete, so no statement may `REPLACE` a row (SQLite deletes the replaced row without
    /// firing delete triggers).
    static let schema = """
        \(entriesTable)
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
        CREATE UNIQUE INDEX IF NOT EXISTS entries_by_id ON entries (id);
        CREATE INDEX IF NOT EXISTS states_by_rank ON states (pinned, queue, rank);
        CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries (expires) WHERE expires IS NOT NULL AND pinned = 0;
        CREATE UNIQUE INDEX IF NOT EXISTS entries_by_file ON entries (file) WHERE file IS NOT NULL;
        CREATE UNIQUE INDEX IF NOT EXISTS entries_displaced_keys ON entries (key) WHERE displaced = 1;
        \(triggers)
        \(sketchTable)
        PRAGMA user_version = 5;
        """

    /// The triggers that delete an entry's state with it, copy its pin into the state, and keep
    /// the totals and the ghosts' count.
    ///
    /// Their statements resolve conflicts with `FAIL`, and so must every statement that fires
    /// them (`INSERT OR FAIL`, `UPDATE OR FAIL`; a `DELETE` has no constraint of its own): a
    /// statement that writes several rows (a trigger's) and may abort makes SQLite copy every
    /// page it changes into a statement journal first, so that an abort can undo the statement
    /// alone. No statement here needs that: an error rolls the whole transaction back. With the
    /// journal, a third of a store into a full cache went into copying pages (callgrind: 843 000
    /// allocations for 5 000 stores).
    ///
    /// Indexes of schema 5 written before this revision have the same triggers with the default
    /// `ABORT`; ``triggersAreCurrent`` finds those, and the opening transaction replaces them
    /// (`replaceTriggers`): the same schema, which older versions of Stash read and write as
    /// before.
    static let triggers = """
        CREATE TRIGGER IF NOT EXISTS entries_deleted AFTER DELETE ON entries BEGIN
            DELETE FROM states WHERE seq = OLD.seq;
        END;
        CREATE TRIGGER IF NOT EXISTS entries_pinned AFTER UPDATE OF size, pinned ON entries BEGIN
            UPDATE OR FAIL states SET size = NEW.size, pinned = NEW.pinned WHERE seq = NEW.seq;
        END;
        CREATE TRIGGER IF NOT EXISTS states_inserted AFTER INSERT ON states BEGIN
            UPDATE OR FAIL totals SET size = size + NEW.size, count = count + 1,
                pinned_size = pinned_size + NEW.pinned * NEW.size, pinned_count = pinned_count + NEW.pinned,
                main_size = main_size + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS states_deleted AFTER DELETE ON states BEGIN
            UPDATE OR FAIL totals SET size = size - OLD.size, count = count - 1,
                pinned_size = pinned_size - OLD.pinned * OLD.size, pinned_count = pinned_count - OLD.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS states_resized AFTER UPDATE OF size, pinned, queue ON states BEGIN
            UPDATE OR FAIL totals SET size = size - OLD.size + NEW.size,
                pinned_size = pinned_size - OLD.pinned * OLD.size + NEW.pinned * NEW.size,
                pinned_count = pinned_count - OLD.pinned + NEW.pinned,
                main_size = main_size - (OLD.queue = 1 AND OLD.pinned = 0) * OLD.size
                    + (NEW.queue = 1 AND NEW.pinned = 0) * NEW.size,
                main_count = main_count - (OLD.queue = 1 AND OLD.pinned = 0) + (NEW.queue = 1 AND NEW.pinned = 0)
            WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS ghost_added AFTER INSERT ON ghosts BEGIN
            UPDATE OR FAIL totals SET ghosts = ghosts + 1 WHERE id = 1;
        END;
        CREATE TRIGGER IF NOT EXISTS ghost_removed AFTER DELETE ON ghosts BEGIN
            UPDATE OR FAIL totals SET ghosts = ghosts - 1 WHERE id = 1;
        END;
        """

    /// The names of ``triggers``.
    static let triggerNames = [
        "entries_deleted", "entries_pinned", "states_inserted", "states_deleted", "states_resized", "ghost_added",
        "ghost_removed",
    ]

    /// Drops the schema's triggers and creates them anew (``triggers``).
    static var replaceTriggers: String {
        triggerNames.map { "DROP TRIGGER IF EXISTS \($0);\n" }.joined() + triggers
    }

    /// Whether every trigger's statements resolve conflicts with `FAIL` (see ``triggers``); an
    /// index without triggers (a new one) counts as current.
    static func triggersAreCurrent(in db: SQLiteConnection) throws -> Bool {
        let stale = try db.first(
            """
            SELECT count(*) FROM sqlite_master WHERE type = 'trigger'
                AND (sql LIKE '%UPDATE totals%' OR sql LIKE '%UPDATE states%')
            """
        ) { $0.int(0) }
        return stale == 0
    }

    /// The tables of entries and of their policy states.
    ///
    /// `data` holds an inline value's bytes (NULL for a value in a file), last, so that
    /// reading the other columns never steps over them.
    static let entriesTable = """
        CREATE TABLE IF NOT EXISTS entries (
            seq INTEGER PRIMARY KEY,
            id INTEGER NOT NULL,
            key BLOB NOT NULL,
            size INTEGER NOT NULL,
            file TEXT,
            checksum INTEGER NOT NULL,
            created REAL NOT NULL,
            expires REAL,
            pinned INTEGER NOT NULL DEFAULT 0,
            content_type TEXT,
            etag TEXT,
            last_modified TEXT,
            extra TEXT,
            displaced INTEGER NOT NULL DEFAULT 0,
            data BLOB
        );
        CREATE TABLE IF NOT EXISTS states (
            seq INTEGER PRIMARY KEY,
            size INTEGER NOT NULL,
            pinned INTEGER NOT NULL,
            queue INTEGER NOT NULL DEFAULT 0,
            rank INTEGER NOT NULL,
            frequency INTEGER NOT NULL DEFAULT 0,
            accessed REAL NOT NULL
        );
        """

    /// Where a version kept an entry's inline bytes (and, since version 5, its access time and
    /// rank), as a join from its `entries e` and the expressions naming them, and the tables to
    /// drop once they are copied.
    struct InlineBytes {
        var join: String
        var data: String
        var tables: [String]
        /// The entry's access time and rank.
        var accessed = "e.accessed"
        var rank = "e.rank"

        /// Version 1: a table of bytes under the entries' ids.
        static let version1 = InlineBytes(join: "LEFT JOIN inline b ON b.id = e.id", data: "b.data", tables: ["inline"])
        /// Versions 2 and 3: the bytes in `items`' rows.
        static let version3 = InlineBytes(join: "LEFT JOIN items i ON i.id = e.id", data: "i.data", tables: ["items"])
        /// Version 4: a narrow `items` pointing into `blobs`.
        static let version4 = InlineBytes(
            join: "LEFT JOIN items i ON i.id = e.id LEFT JOIN blobs b ON b.id = i.blob", data: "b.data",
            tables: ["items", "blobs"])
        /// Version 5: the bytes in the entries' own rows, the access time and rank in `states`.
        static let version5 = InlineBytes(
            join: "JOIN states s ON s.seq = e.seq", data: "e.data", tables: [], accessed: "s.accessed", rank: "s.rank")
    }

    /// Rebuilds an older version's `entries` (with the `displaced` column of version 2 on) in
    /// version 5's layout, with its inline bytes in its rows and its policy state in `states`,
    /// then drops the old tables.
    ///
    /// Every column is kept, ids included. The rows are copied in the old table's order (by
    /// id), not sorted by age: a sort of the rows would hold every value in memory
    /// (`temp_store = MEMORY`), and reading them in age order through a sorted list of ids
    /// reads the old tables at random (76 s at a million 1 KiB entries, against 48 s for this
    /// copy and 35 s for the sort, on a loaded machine). Entries stored after the migration are
    /// appended as usual. The old triggers and indexes are dropped first (a rename would carry them to
    /// the old table, and their names would keep the schema's from creating the new ones);
    /// the new ones come with the schema, after the copy, so that the totals are kept as they
    /// were and the indexes are built once, sorted. Like every migration, it runs in the
    /// transaction that opens the index, so a crash or an error leaves the old version as it
    /// was.
    static func migrationToVersion5(from bytes: InlineBytes) -> String {
        """
        DROP TRIGGER IF EXISTS entries_inserted;
        DROP TRIGGER IF EXISTS entries_deleted;
        DROP TRIGGER IF EXISTS entries_resized;
        DROP TRIGGER IF EXISTS entries_item_inserted;
        DROP TRIGGER IF EXISTS entries_item_updated;
        DROP TRIGGER IF EXISTS items_deleted;
        DROP TRIGGER IF EXISTS items_blob_replaced;
        DROP INDEX IF EXISTS entries_by_rank;
        DROP INDEX IF EXISTS entries_by_expiry;
        DROP INDEX IF EXISTS entries_by_file;
        DROP INDEX IF EXISTS entries_displaced_keys;
        ALTER TABLE entries RENAME TO entries_v4;
        \(entriesTable)
        INSERT INTO entries (id, key, size, file, checksum, created, expires, pinned, content_type, etag,
                             last_modified, extra, displaced, data)
            SELECT e.id, e.key, e.size, e.file, e.checksum, e.created, e.expires, e.pinned, e.content_type, e.etag,
                e.last_modified, e.extra, e.displaced, CASE WHEN e.file IS NULL THEN \(bytes.data) END
            FROM entries_v4 e \(bytes.join);
        INSERT INTO states (seq, size, pinned, queue, rank, frequency, accessed)
            SELECT n.seq, e.size, e.pinned, e.queue, e.rank, e.frequency, e.accessed
            FROM entries n JOIN entries_v4 e ON e.id = n.id;
        DROP TABLE entries_v4;
        \(bytes.tables.map { "DROP TABLE IF EXISTS \($0);" }.joined(separator: "\n"))
        """
    }

    /// Version 1 had no `displaced` flag: every entry counts as displaced (their ids were
    /// allocated in order, not derived from their keys).
    static let migrationFromVersion1 = """
        ALTER TABLE totals ADD COLUMN displaced INTEGER NOT NULL DEFAULT 0;
        UPDATE totals SET displaced = (SELECT count(*) FROM entries) WHERE id = 1;
        """

    /// Version 2's entries gain the `displaced` flag.
    ///
    /// Its unique index of keys goes with the old table at the migration to version 5: only
    /// displaced entries need one. If the index held any entry away from its key's id, every
    /// entry is flagged (not worth hashing every key for: flagged entries at their own id are
    /// still found there first).
    static let migrationFromVersion2 = """
        ALTER TABLE entries ADD COLUMN displaced INTEGER NOT NULL DEFAULT 0;
        UPDATE entries SET displaced = 1 WHERE (SELECT displaced FROM totals WHERE id = 1) > 0;
        """

    /// The SQL that brings an index of `version` (1-4) to the current one, or `nil` for a new
    /// (version 0) or current index.
    static func migration(fromVersion version: Int32) -> String? {
        switch version {
        case 1:
            // Version 1 indexes written before the sketch existed gain its table too.
            sketchTable + migrationFromVersion1 + migrationFromVersion2 + migrationToVersion5(from: .version1)
                + schema
        case 2: migrationFromVersion2 + migrationToVersion5(from: .version3) + schema
        case 3: migrationToVersion5(from: .version3) + schema
        case 4: migrationToVersion5(from: .version4) + schema
        default: nil
        }
    }

    /// TinyLFU's frequency sketch: chunk -1 is a header (generation, word count, additions),
    /// chunks 0… hold `FrequencySketch.wordsPerChunk` little-endian words each.
    static let sketchTable = """
        CREATE TABLE IF NOT EXISTS sketch (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
        """
}
