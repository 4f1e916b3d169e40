import CSQLite
import Foundation

/// The SQLite index of one cache directory: a writer connection, a pool of reader
/// connections, the schema, and recovery when the database is damaged or deleted.
///
/// In WAL mode readers never block the writer and vice versa; writers in this process are
/// serialised by `writer`'s lock and writers in other processes by SQLite's own lock,
/// which `BEGIN IMMEDIATE` takes up front (waiting at most the busy timeout).
// @unchecked: every mutable field sits in a LockedValue; connections never leave their lock
// (the writer) or their checkout (a reader) while in use.
final class DiskIndex: @unchecked Sendable {
    static let schemaVersion: Int32 = 1

    let root: String
    let databasePath: String
    private let busyTimeout: Duration
    private let durability: DiskCache.Durability
    private let onRecovery: @Sendable (String) -> Void

    private struct Writer {
        var connection: SQLiteConnection?
        var inode: UInt64?
    }

    private struct ReaderPool {
        var idle: [SQLiteConnection] = []
        var generation = 0
    }

    /// Where the index of the cache rooted at `root` lives.
    static func databasePath(inRoot root: String) -> String { root + "/index.sqlite" }

    private let writer = LockedValue(Writer())
    private let readers = LockedValue(ReaderPool())

    init(
        root: String, busyTimeout: Duration, durability: DiskCache.Durability,
        onRecovery: @escaping @Sendable (String) -> Void
    ) throws {
        self.root = root
        self.databasePath = Self.databasePath(inRoot: root)
        self.busyTimeout = busyTimeout
        self.durability = durability
        self.onRecovery = onRecovery
        try writer.withLock { state in try openWriter(&state) }
    }

    func close() {
        writer.withLock { state in
            state.connection?.close()
            state.connection = nil
        }
        readers.withLock { pool in
            for connection in pool.idle { connection.close() }
            pool.idle.removeAll()
            pool.generation += 1
        }
    }

    // MARK: - Access

    /// Runs `body` on a reader connection (outside any explicit transaction).
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let (connection, generation) = try checkOutReader()
        defer { checkIn(connection, generation: generation) }
        return try body(connection)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` on the writer connection, recreating the
    /// directory and database first if they were deleted behind the cache's back.
    ///
    /// `body` must not call back into the index. If it throws, the transaction rolls back.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try writer.withLock { state in
            if state.connection == nil || POSIXFile.inode(databasePath) != state.inode {
                try reopenAfterDeletion(&state)
            }
            let db = state.connection!
            try db.executeCached("BEGIN IMMEDIATE")
            do {
                let result = try body(db)
                try db.executeCached("COMMIT")
                return result
            } catch {
                try? db.executeCached("ROLLBACK")  // fails only if SQLite already rolled back itself
                throw error
            }
        }
    }

    /// Moves a damaged database aside and starts an empty one (used by `verify(repair:)`).
    func replaceDamagedDatabase(reason: String) throws {
        try writer.withLock { state in
            state.connection?.close()
            state.connection = nil
            retireReaders()
            moveDamagedDatabaseAside(cause: SQLiteError(code: SQLITE_CORRUPT, message: reason))
            try openWriter(&state)
        }
    }

    // MARK: - Connections

    private func checkOutReader() throws -> (SQLiteConnection, Int) {
        let (reused, generation) = readers.withLock { pool in (pool.idle.popLast(), pool.generation) }
        if let reused { return (reused, generation) }
        let connection = try SQLiteConnection(path: databasePath, busyTimeout: busyTimeout)
        // Map the whole index (up to SQLite's 2 GiB ceiling) so that a lookup in a large cache
        // touches mapped pages instead of copying them through read(2) into a small page cache.
        try connection.execute("PRAGMA query_only = 1; PRAGMA mmap_size = 2147418112")
        return (connection, generation)
    }

    private func checkIn(_ connection: SQLiteConnection, generation: Int) {
        let stale: SQLiteConnection? = readers.withLock { pool in
            guard pool.generation == generation, pool.idle.count < 8 else { return connection }
            pool.idle.append(connection)
            return nil
        }
        stale?.close()
    }

    private func retireReaders() {
        let old = readers.withLock { pool in
            pool.generation += 1
            defer { pool.idle.removeAll() }
            return pool.idle
        }
        for connection in old { connection.close() }
    }

    private func reopenAfterDeletion(_ state: inout Writer) throws {
        state.connection?.close()
        state.connection = nil
        retireReaders()
        try openWriter(&state)
    }

    private func openWriter(_ state: inout Writer) throws {
        do {
            for directory in [root, root + "/data", root + "/tmp"] {
                try POSIXFile.makeDirectory(directory)
            }
        } catch {
            let readOnly = error.errno == EACCES || error.errno == EROFS || error.errno == EPERM
            throw StashError(
                readOnly ? .readOnly : .io,
                "Cannot create the cache directory \(root): check that its parent exists and is writable.",
                cause: error)
        }
        do {
            state.connection = try openAndMigrate()
        } catch let error as SQLiteError where error.isCorruption {
            moveDamagedDatabaseAside(cause: error)
            state.connection = try openAndMigrate()
        }
        state.inode = POSIXFile.inode(databasePath)
    }

    /// Opens the writer connection, creating or upgrading the schema.
    ///
    /// When several processes open a new cache at once, SQLite reports "database is locked"
    /// at once, without waiting through the busy handler, to all but the one switching the new
    /// file to WAL or creating its tables (in a test, 14 of 30 simultaneous first opens by two
    /// processes failed so). Those are retried, with short growing pauses, for up to the busy
    /// timeout.
    private func openAndMigrate() throws -> SQLiteConnection {
        let deadline = ContinuousClock.now + busyTimeout
        var pause: TimeInterval = 0.001
        while true {
            do {
                let db = try SQLiteConnection(path: databasePath, busyTimeout: busyTimeout)
                do {
                    try configure(db)
                } catch {
                    db.close()
                    throw error
                }
                return db
            } catch let error as SQLiteError where error.isBusy && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.05)
            } catch let error as SQLiteError where !error.isCorruption {
                throw indexError(error, opening: true)
            }
        }
    }

    private func configure(_ db: SQLiteConnection) throws {
        let version = try db.first("PRAGMA user_version") { Int32($0.int(0)) } ?? 0
        if version != 0 && version != Self.schemaVersion {
            // A different on-disk format: a cache may always start afresh.
            throw SQLiteError(code: SQLITE_NOTADB, message: "unsupported schema version \(version)")
        }
        let synchronous = durability == .durable ? "FULL" : "NORMAL"
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(synchronous);
            PRAGMA temp_store = MEMORY;
            PRAGMA mmap_size = 67108864;
            """)
        let hasSketchTable = try db.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sketch'") {
            $0.int(0) == 1
        }
        if version == 0 || hasSketchTable != true {
            try db.execute("BEGIN IMMEDIATE")
            do {
                // Version 1 indexes written before the sketch existed gain its table; older Stash
                // versions ignore it.
                try db.execute(version == 0 ? Self.schema : Self.sketchTable)
                try db.execute("COMMIT")
            } catch {
                try? db.execute("ROLLBACK")  // the schema error is the one to report
                throw error
            }
        }
    }

    private func moveDamagedDatabaseAside(cause: SQLiteError) {
        let stamp = Int(Date().timeIntervalSince1970)
        let aside = databasePath + ".damaged-\(stamp)"
        // Best effort: if the rename fails the files are removed so that a fresh index can start.
        for suffix in ["", "-wal", "-shm"] {
            let from = databasePath + suffix
            if (try? POSIXFile.rename(from, aside + suffix)) == nil { try? POSIXFile.remove(from) }
        }
        onRecovery(
            "The cache index \(databasePath) was damaged (\(cause)); it was moved to \(aside) and the cache starts empty."
        )
    }

    func indexError(_ error: any Error, opening: Bool = false) -> StashError {
        if let error = error as? StashError { return error }
        guard let sqlite = error as? SQLiteError else {
            return StashError(.io, "Cache index \(databasePath) failed.", cause: error)
        }
        if sqlite.isBusy {
            return StashError(
                .busy,
                "The cache index \(databasePath) stayed locked by another connection for longer than \(busyTimeout); retry, or raise the busy timeout.",
                cause: sqlite)
        }
        if sqlite.isCorruption {
            return StashError(
                .corrupt, "The cache index \(databasePath) is damaged; run verify(repair: true) or removeAll().",
                cause: sqlite)
        }
        if sqlite.isReadOnly || access(root, W_OK) != 0 {
            return StashError(
                .readOnly,
                "The cache index \(databasePath) cannot be \(opening ? "opened" : "written"): make the directory writable or choose another one.",
                cause: sqlite)
        }
        if sqlite.code & 0xff == SQLITE_FULL {
            return StashError(
                .io, "The disk holding \(root) is full: free space or lower the cache's size limit.", cause: sqlite)
        }
        return StashError(.io, "The cache index \(databasePath) failed.", cause: sqlite)
    }

    // MARK: - Schema

    /// One row per entry; inline values in their own table so that updating an entry's policy
    /// state never rewrites its bytes; totals in a one-row table kept by triggers, so that
    /// opening a cache reads one row instead of scanning.
    private static let schema = """
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
    private static let sketchTable = """
        CREATE TABLE IF NOT EXISTS sketch (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
        """
}
