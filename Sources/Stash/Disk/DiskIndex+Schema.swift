extension DiskIndex {
    /// One row per entry; inline values in their own table so that updating an entry's policy
    /// state never rewrites its bytes; totals in a one-row table kept by triggers, so that
    /// opening a cache reads one row instead of scanning.
    static let schema = """
        CREATE TABLE IF NOT EXISTS entries (
            id INTEGER PRIMARY KEY,
            key BLOB NOT NULL UNIQUE,
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
            extra TEXT
        );
        CREATE TABLE IF NOT EXISTS inline (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
        CREATE TABLE IF NOT EXISTS totals (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            size INTEGER NOT NULL, count INTEGER NOT NULL,
            pinned_size INTEGER NOT NULL, pinned_count INTEGER NOT NULL,
            main_size INTEGER NOT NULL, main_count INTEGER NOT NULL,
            clock INTEGER NOT NULL, hand INTEGER NOT NULL, ghosts INTEGER NOT NULL, policy TEXT
        );
        INSERT OR IGNORE INTO totals VALUES (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL);
        CREATE TABLE IF NOT EXISTS ghosts (fingerprint INTEGER PRIMARY KEY, rank INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS ghosts_by_rank ON ghosts (rank);
        CREATE INDEX IF NOT EXISTS entries_by_rank ON entries (pinned, queue, rank);
        CREATE INDEX IF NOT EXISTS entries_by_expiry ON entries (expires) WHERE expires IS NOT NULL AND pinned = 0;
        CREATE UNIQUE INDEX IF NOT EXISTS entries_by_file ON entries (file) WHERE file IS NOT NULL;
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
            DELETE FROM inline WHERE id = OLD.id;
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
        PRAGMA user_version = 1;
        """

    /// TinyLFU's frequency sketch: chunk -1 is a header (generation, word count, additions),
    /// chunks 0… hold `FrequencySketch.wordsPerChunk` little-endian words each.
    static let sketchTable = """
        CREATE TABLE IF NOT EXISTS sketch (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
        """
}
