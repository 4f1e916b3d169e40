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
    static let schemaVersion: Int32 = 5

    let root: String
    let databasePath: String
    private let busyTimeout: Duration
    private let durability: DiskCache.Durability
    /// Whether every write is a transaction of its own (``DiskCache/WriteMode/immediate``, or
    /// ``DiskCache/Durability/durable``) rather than a batch: the writer then reads pages with
    /// pread(2) and keeps its page cache at 2 MiB (see `unmapCommitPerWriteWriter`).
    private let commitsEachWrite: Bool
    private let onEvent: (@Sendable (DiskCache.Event) -> Void)?
    /// Whether the directory cannot be written: reads work, every write throws `.readOnly`, and
    /// nothing (repair, expiry, access times) is written behind the caller's back.
    let isReadOnly: Bool

    private struct Writer {
        var connection: SQLiteConnection?
        var inode: UInt64?
    }

    private struct ReaderPool {
        var idle: [SQLiteConnection] = []
        var generation = 0
        /// Whether a job that ends idle readers' transactions is pending.
        var releaseScheduled = false
        var idleRelease: TimeInterval = 0.05
        /// When a reader holding a read transaction was last returned (uptime nanoseconds).
        var lastCheckIn: UInt64 = 0
    }

    /// A reader kept for the threads that hash to this slot, under a lock of its own.
    ///
    /// With one pool, every read took and returned its reader under the pool's lock, and
    /// threads reading at once queued on it: two threads reading a freshly filled cache read
    /// 470k-510k hits/s together, about what one thread reads alone. A thread now takes the
    /// reader of its own slot, which no other thread touches unless two hash alike (then one
    /// of them uses the pool): 1.13M-1.25M (a probe, 3 runs). The pool's generation and
    /// release rules apply to slots too.
    private struct ReaderSlot {
        var connection: SQLiteConnection?
        var generation = 0
        var releaseScheduled = false
        var lastCheckIn: UInt64 = 0
    }

    /// Eight slots (`callersSlot` takes 3 bits): more than the threads that read at once on
    /// most machines; a thread that shares a slot still has the pool.
    private let slots = (0..<8).map { _ in LockedValue(ReaderSlot()) }

    /// The slot of the calling thread, taken once per read.
    ///
    /// Its thread handle, mixed (Fibonacci hashing), so that handles a fixed stride apart
    /// spread over the slots.
    private var callersSlot: LockedValue<ReaderSlot> {
        #if canImport(Darwin)
            let thread = UInt64(UInt(bitPattern: pthread_self()))
        #else
            let thread = UInt64(pthread_self())
        #endif
        return slots[Int((thread &* 0x9E37_79B9_7F4A_7C15) >> 61)]  // the top 3 bits: 8 slots
    }

    /// Where the index of the cache rooted at `root` lives.
    static func databasePath(inRoot root: String) -> String { root + "/index.sqlite" }

    private let writer = LockedValue(Writer())
    /// How many read transactions readers started (tests: a burst of reads starts one).
    let snapshotStarts = LockedValue(0)
    /// How many times what a write left in the index may have gone since.
    ///
    /// Counts rollbacks and new writer connections (the index was deleted, rebuilt or
    /// reopened). Copies of index state (`DiskCache.PersistedStates`) trust themselves only
    /// while it is unchanged.
    let writerEpoch = LockedValue(0)
    let checkpointer: IndexCheckpointer
    /// Test hook: the index's size as the writer's page cache is fitted to it (`nil`: the
    /// file's size); set before the writes it should affect, read under the writer's lock.
    var databaseBytesForWriterCache: (@Sendable () -> Int)?
    private let readers = LockedValue(ReaderPool())

    /// Opens (creating, checking and if needed rebuilding) the index of `root`.
    ///
    /// - Parameter readOnly: Open read-only even if the directory is writable (fault injection
    ///   in tests); a directory that exists but cannot be written always opens read-only.
    init(
        root: String, busyTimeout: Duration, durability: DiskCache.Durability, commitsEachWrite: Bool = false,
        onEvent: (@Sendable (DiskCache.Event) -> Void)?, readOnly: Bool = false
    ) throws {
        self.root = root
        self.databasePath = Self.databasePath(inRoot: root)
        self.busyTimeout = busyTimeout
        self.durability = durability
        self.commitsEachWrite = commitsEachWrite
        self.onEvent = onEvent
        self.isReadOnly = readOnly || (access(root, F_OK) == 0 && access(root, W_OK) != 0)
        self.checkpointer = IndexCheckpointer(databasePath: databasePath, busyTimeout: busyTimeout)
        checkpointer.releaseIdleReaders = { [weak self] in self?.releaseIdleSnapshots() }
        if isReadOnly {
            try openReadOnly()
        } else {
            try writer.withLock { state in try openWriter(&state) }
        }
    }

    /// Throws ``StashError/Code/readOnly`` naming the directory when the cache is read-only.
    func throwIfReadOnly() throws {
        guard isReadOnly else { return }
        throw StashError(
            .readOnly,
            "The cache in \(root) is read-only (the directory cannot be written): reads work, writes need write permission on it.",
            cause: POSIXErrorCode(operation: "access \(root)", errno: EACCES))
    }

    private func openReadOnly() throws {
        if try IndexRecovery.damage(inRoot: root) != nil || access(databasePath, F_OK) != 0 {
            throw StashError(
                access(databasePath, F_OK) == 0 ? .corrupt : .readOnly,
                "The cache index \(databasePath) is missing or damaged and cannot be rebuilt because \(root) is read-only: make the directory writable, or open it as its owner."
            )
        }
        let version: Int32
        do {
            version = try read { db in
                _ = try db.first("SELECT count FROM totals WHERE id = 1") { $0.int(0) }
                return try db.first("PRAGMA user_version") { Int32($0.int(0)) } ?? 0
            }
        } catch {
            throw indexError(error, opening: true)
        }
        // An older schema is upgraded by the open that may write; reading it with this
        // version's statements would fail on every lookup instead.
        if version != Self.schemaVersion {
            throw StashError(
                version > Self.schemaVersion ? .unsupportedVersion : .readOnly,
                version > Self.schemaVersion
                    ? "The cache index \(databasePath) was written by a newer version of Stash (schema \(version), this version reads \(Self.schemaVersion)): open it with that version, or choose another directory."
                    : "The cache index \(databasePath) has schema \(version), which this version of Stash upgrades to \(Self.schemaVersion) when it opens it, but \(root) is read-only: open it once with write permission on the directory (or as its owner), or with the Stash that wrote it."
            )
        }
    }

    func close() {
        writer.withLock { state in
            state.connection?.close()
            state.connection = nil
        }
        retireReaders()  // closes the checkpointer too
    }

    // MARK: - Access

    /// Runs `body` on a reader connection, in a read transaction that sees every commit
    /// finished before the call (kept open between calls while no commit happens, see
    /// `WALHeader`).
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        let slot = callersSlot
        let (connection, generation) = try checkOutReader(from: slot)
        defer { checkIn(connection, generation: generation, to: slot) }
        do {
            if let header = connection.currentWALHeader(), try connection.refreshSnapshot(to: header) {
                snapshotStarts.withLock { $0 += 1 }
            }
            return try body(connection)
        } catch {
            connection.endSnapshot()
            throw error
        }
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT` on the writer connection, recreating the
    /// directory and database first if they were deleted behind the cache's back.
    ///
    /// `body` must not call back into the index. If it throws, the transaction rolls back.
    /// `afterCommit` runs once the transaction has committed, before the next write
    /// transaction of any thread can begin: the write-behind writer forgets a committed batch
    /// there, so that a read never finds a staged change that a later transaction (a
    /// `removeAll`, say) has already replaced in the index.
    func write<T>(afterCommit: (() -> Void)? = nil, _ body: (SQLiteConnection) throws -> T) throws -> T {
        try throwIfReadOnly()
        return try writer.withLock { state in
            if state.connection == nil || POSIXFile.inode(databasePath) != state.inode {
                try reopenAfterDeletion(&state)
            }
            let db = state.connection!
            try db.executeCached("BEGIN IMMEDIATE")
            db.writeTransactions += 1
            if !commitsEachWrite && db.writeTransactions % Self.cacheSizeCheckInterval == 0 {
                try fitWriterCache(db)
            }
            db.pendingClock = nil  // whatever an earlier transaction that rolled back reserved
            // SQLite's data version moves with every commit, ours or another connection's, and
            // with a rollback: unchanged since our last commit means nothing else wrote since.
            let version = db.dataVersion
            db.followsOwnCommit = version != nil && version == db.dataVersionAfterCommit
            do {
                let result = try body(db)
                if let clock = db.pendingClock {
                    try db.run("UPDATE totals SET clock = ?1 WHERE id = 1", [.integer(clock)])
                }
                try db.executeCached("COMMIT")
                db.dataVersionAfterCommit = db.dataVersion
                afterCommit?()
                return result
            } catch {
                db.dataVersionAfterCommit = nil
                try? db.executeCached("ROLLBACK")  // fails only if SQLite already rolled back itself
                writerEpoch.withLock { $0 += 1 }
                throw error
            }
        }
    }

    /// Runs `body` in a write transaction, or on a reader when `writing` is false or the cache
    /// is read-only (checks that change nothing).
    func readOrWrite<T>(writing: Bool, _ body: (SQLiteConnection) throws -> T) throws -> T {
        writing && !isReadOnly ? try write(body) : try read(body)
    }

    /// Moves a damaged database aside and rebuilds it from the value files (used by
    /// `verify(repair:)`).
    @discardableResult
    func rebuildDamagedDatabase(reason: String) throws -> DiskCache.IndexRebuild? {
        try throwIfReadOnly()
        return try writer.withLock { state in
            state.connection?.close()
            state.connection = nil
            retireReaders()
            let rebuild = try IndexRecovery.rebuild(root: root, reason: reason, onEvent: onEvent, force: true)
            try openWriter(&state)
            return rebuild
        }
    }

    // MARK: - Connections

    private func checkOutReader(from slot: LockedValue<ReaderSlot>) throws -> (SQLiteConnection, Int) {
        let held = slot.withLock { slot in slot.connection.take().map { ($0, slot.generation) } }
        if let held { return held }
        let (reused, generation) = readers.withLock { pool in (pool.idle.popLast(), pool.generation) }
        if let reused { return (reused, generation) }
        if isReadOnly {
            // Without write permission SQLite cannot create the WAL's shared-memory file; a cache
            // closed cleanly has no WAL, and is then opened as immutable (no locks, no WAL).
            let hasWAL = access(databasePath + "-wal", F_OK) == 0
            let uri = URL(fileURLWithPath: databasePath).absoluteString + (hasWAL ? "?mode=ro" : "?immutable=1")
            return (try SQLiteConnection(path: uri, busyTimeout: busyTimeout, readOnlyURI: true), generation)
        }
        // Never create the file here: while a rebuild has moved the index aside, a reader waits
        // for the writer's reopen instead of creating an empty index.
        let connection = try SQLiteConnection(path: databasePath, busyTimeout: busyTimeout, createsFile: false)
        // Map the whole index (up to SQLite's 2 GiB ceiling) so that a lookup in a large cache
        // touches mapped pages instead of copying them through read(2) into a small page cache.
        // The SELECT attaches the connection to the `-shm` file, whose header it then watches.
        try connection.execute("PRAGMA query_only = 1; PRAGMA mmap_size = 2147418112; SELECT 1 FROM totals LIMIT 1")
        connection.walHeader = connection.mapWALHeader()
        return (connection, generation)
    }

    private func checkIn(_ connection: SQLiteConnection, generation: Int, to slot: LockedValue<ReaderSlot>) {
        // While the writer waits to start the WAL over, no reader keeps a transaction open.
        if checkpointer.readersLetGo { connection.endSnapshot() }
        let (kept, schedulesRelease) = slot.withLock { slot -> (Bool, Bool) in
            guard slot.connection == nil, slot.generation == generation else { return (false, false) }
            slot.connection = connection
            guard connection.snapshot != nil else { return (true, false) }
            slot.lastCheckIn = DispatchTime.now().uptimeNanoseconds
            guard !slot.releaseScheduled else { return (true, false) }
            slot.releaseScheduled = true
            return (true, true)
        }
        if schedulesRelease { scheduleRelease(of: slot, after: snapshotIdleRelease) }
        if kept { return }
        let (stale, releaseAfter): (SQLiteConnection?, TimeInterval?) = readers.withLock { pool in
            guard pool.generation == generation, pool.idle.count < 8 else { return (connection, nil) }
            pool.idle.append(connection)
            guard connection.snapshot != nil else { return (nil, nil) }
            pool.lastCheckIn = DispatchTime.now().uptimeNanoseconds
            guard !pool.releaseScheduled else { return (nil, nil) }
            pool.releaseScheduled = true
            return (nil, pool.idleRelease)
        }
        stale?.close()
        if let releaseAfter { scheduleRelease(after: releaseAfter) }
    }

    private func scheduleRelease(after seconds: TimeInterval) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [weak self] in
            self?.releaseIdleSnapshots(onlyIfIdle: true)
        }
    }

    /// Ends the read transaction of `slot`'s reader once no read has returned it for
    /// `snapshotIdleRelease` (else it looks again then).
    private func scheduleRelease(of slot: LockedValue<ReaderSlot>, after seconds: TimeInterval) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [weak self] in
            guard let self else { return }
            let idleRelease = snapshotIdleRelease
            let again: TimeInterval? = slot.withLock { slot in
                let idleFor = Double(DispatchTime.now().uptimeNanoseconds &- slot.lastCheckIn) / 1e9
                if idleFor < idleRelease { return idleRelease - idleFor }
                slot.releaseScheduled = false
                slot.connection?.endSnapshot()
                return nil
            }
            if let again { scheduleRelease(of: slot, after: again) }
        }
    }

    /// How long an idle reader may keep its read transaction open after the last read.
    ///
    /// 50 ms unless a test changes it. An open read transaction keeps SQLite from checkpointing
    /// past it, so the WAL of a cache that other processes keep writing would grow while this
    /// process stopped reading.
    var snapshotIdleRelease: TimeInterval {
        get { readers.withLock { $0.idleRelease } }
        set { readers.withLock { $0.idleRelease = newValue } }
    }

    /// Ends the read transactions of the readers not in use; with `onlyIfIdle`, only once no
    /// read has finished for `snapshotIdleRelease` (else it looks again then).
    func releaseIdleSnapshots(onlyIfIdle: Bool = false) {
        let again: TimeInterval? = readers.withLock { pool in
            let idleFor = Double(DispatchTime.now().uptimeNanoseconds &- pool.lastCheckIn) / 1e9
            if onlyIfIdle && idleFor < pool.idleRelease { return pool.idleRelease - idleFor }
            pool.releaseScheduled = false
            for connection in pool.idle { connection.endSnapshot() }
            return nil
        }
        if !onlyIfIdle {
            for slot in slots { slot.withLock { $0.connection?.endSnapshot() } }
        }
        if let again { scheduleRelease(after: again) }
    }

    private func retireReaders() {
        checkpointer.close()
        var old = readers.withLock { pool in
            pool.generation += 1
            defer { pool.idle.removeAll() }
            return pool.idle
        }
        for slot in slots {
            slot.withLock { slot in
                slot.generation += 1
                if let connection = slot.connection.take() { old.append(connection) }
            }
        }
        for connection in old { connection.close() }
    }

    private func reopenAfterDeletion(_ state: inout Writer) throws {
        state.connection?.close()
        state.connection = nil
        writerEpoch.withLock { $0 += 1 }
        retireReaders()
        try openWriter(&state)
    }

    private func openWriter(_ state: inout Writer) throws {
        do {
            // The cache's directory is its owner's (0700); inside it, modes honour the umask,
            // so that an owner who opens the directory to others opens its values too.
            try POSIXFile.makeDirectory(root)
            for directory in [root + "/data", root + "/tmp"] {
                try POSIXFile.makeDirectory(directory, mode: 0o777)
            }
        } catch {
            let readOnly = error.errno == EACCES || error.errno == EROFS || error.errno == EPERM
            let full = error.errno == ENOSPC || error.errno == EDQUOT
            throw StashError(
                readOnly ? .readOnly : full ? .diskFull : .io,
                "Cannot create the cache directory \(root): check that its parent exists and is writable.",
                cause: error)
        }
        if let reason = try IndexRecovery.damage(inRoot: root) {
            try IndexRecovery.rebuild(root: root, reason: reason, onEvent: onEvent)
        }
        for attempt in 0..<2 {
            // Shared while opening: a rebuild in another process (exclusive) finishes first.
            let lock: Int32
            do {
                lock = try IndexRecovery.takeLock(root: root, exclusive: false)
            } catch {
                throw StashError(.io, "Cannot lock \(root)/\(IndexRecovery.lockName).", cause: error)
            }
            do {
                state.connection = try openAndMigrate()
                checkpointer.install(on: state.connection!)
                Foundation.close(lock)
                break
            } catch let error as SQLiteError where error.isCorruption && attempt == 0 {
                Foundation.close(lock)
                try IndexRecovery.rebuild(
                    root: root, reason: "SQLite reports the index damaged (\(error))", onEvent: onEvent, force: true)
            } catch {
                Foundation.close(lock)
                throw error
            }
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
                    if commitsEachWrite {
                        try unmapCommitPerWriteWriter(db)
                    } else {
                        try fitWriterCache(db)
                    }
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

    /// Write transactions between two checks of a batching writer's page cache against the
    /// index's size (a `stat` each).
    static let cacheSizeCheckInterval = 256

    /// The writer's page cache, in KiB, for an index file of `databaseBytes`: a 64th of the
    /// file, from 2 MiB to 16 MiB, in steps of 2 MiB.
    ///
    /// With 1 KiB values inline, a 64th is about the size of the index of ids, the B-tree whose
    /// leaves every store and every eviction changes at random: kept in the writer's cache, a
    /// batch finds the leaves the batches before it changed instead of reading them back from
    /// the WAL with pread(2). At a million entries (a 1.3 GB index), 16 MiB against 2 MiB took
    /// a delete from 20.1 to 11.1 µs and a store into a full cache from 43.1 to 34.8 µs
    /// (medians of 4 rounds of `StashBenchmarks scaling`; 17.2 to 10.7 and 35.9 to 32.8 in 5
    /// earlier rounds). Below 256 MiB of index the cache stays at 2 MiB, where a larger one
    /// cost more than it saved (see `configure`). A writer that commits every write keeps
    /// the 2 MiB `configure` sets: the walk it describes may come at any of its commits.
    static func writerCacheKiB(forDatabaseBytes databaseBytes: Int) -> Int {
        let step = 2048
        return min(max(databaseBytes / 64 / 1024 / step * step, step), 8 * step)
    }

    /// Sets a batching writer's page cache for the index's current size (``writerCacheKiB``).
    private func fitWriterCache(_ db: SQLiteConnection) throws {
        let bytes = databaseBytesForWriterCache?() ?? POSIXFile.size(databasePath)?.logical ?? 0
        let kib = Self.writerCacheKiB(forDatabaseBytes: bytes)
        guard db.writerCacheKiB != kib else { return }
        try db.execute("PRAGMA cache_size = -\(kib)")
        db.writerCacheKiB = kib
    }

    /// Turns the memory map of a writer that commits every write off, once its index is open
    /// (the migration `configure` may run still reads through the map).
    ///
    /// Commit per write: every store reads its leaf of the index of ids, a page anywhere in the
    /// file. Read through the map, the first touch of each page costs a page fault that maps
    /// its neighbours too; read with pread(2), it is one copy. A store took 38.4 µs against
    /// 41.4 through the map at 10 000 entries and 41.4 against 43.3 at 100 000 (medians of 5
    /// rounds); at a million, where this machine's disk spread single runs over 40-86 µs, 47.3
    /// against 49.5 (4 rounds), with 0.1 page faults per store against 0.7. The batches of
    /// write-behind read far more pages per commit, many of them neighbours (the oldest
    /// entries, the ends of queues), and were slower without the map (delete 20.5 µs against
    /// 17.2 at a million entries).
    private func unmapCommitPerWriteWriter(_ db: SQLiteConnection) throws {
        try db.execute("PRAGMA mmap_size = 0")
    }

    private func configure(_ db: SQLiteConnection) throws {
        let version = try db.first("PRAGMA user_version") { Int32($0.int(0)) } ?? 0
        if version > Self.schemaVersion {
            // A newer Stash's cache: starting afresh over it would destroy its entries.
            throw StashError(
                .unsupportedVersion,
                "The cache index \(databasePath) was written by a newer version of Stash (schema \(version), this version reads \(Self.schemaVersion)): open it with that version, or choose another directory."
            )
        }
        let synchronous = durability == .durable ? "FULL" : "NORMAL"
        // The writer maps the whole index too (up to SQLite's 2 GiB ceiling): with 64 MiB
        // mapped, a store into a cache of 100 000 small entries read a third of its pages
        // through pread(2) (perf), and the write path's B-tree descents (entries, its id
        // and rank indexes) touch pages all over the file (a writer that commits every write
        // turns the map off once the index is open: see `unmapCommitPerWriteWriter`). Pages come from the
        // map, so the page cache only keeps pages the writer changed, and it starts small
        // (2 MiB; a large index's grows, see `writerCacheKiB`): when a leaf split
        // reorders its new pages, SQLite parks one under a page number past the end of the file,
        // and the commit then walks every page the cache holds to drop pages past the end
        // (pcache1TruncateUnsafe). With 16 MiB that walk was 10-15 % of a 1 KiB store (perf,
        // uprobes on the walk); 2 MiB took 20 % less CPU per store at 1k-100k entries, and a
        // store into a full cache 3-8 % less.
        // A batch's changed pages may outgrow those 2 MiB, up to 16 MiB (`cache_spill`, in
        // pages), before SQLite writes them to the WAL in the middle of the transaction: a
        // spilled page is written again if it changes again, and read back with pread(2) (the
        // map shows the database file, not the WAL). A batch of 5 000 stores into a full cache
        // of a million entries wrote 30 700 pages and read 33 100 with 2 MiB, 9 900 and 14 600
        // with 16 MiB (strace, checkpoints included). The cache gives the pages above its size
        // back when the batch commits.
        try db.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(synchronous);
            PRAGMA temp_store = MEMORY;
            PRAGMA mmap_size = 2147418112;
            PRAGMA cache_size = -2048;
            PRAGMA cache_spill = 4096;
            """)
        #if canImport(Darwin)
            // On Apple platforms SQLite's fsync leaves a commit in the drive's cache, which a power loss
            // empties: a durable index flushes it with F_FULLFSYNC, as POSIXFile.sync flushes value files.
            if durability == .durable { try db.execute("PRAGMA fullfsync = ON; PRAGMA checkpoint_fullfsync = ON") }
        #endif
        let hasSketchTable = try db.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sketch'") {
            $0.int(0) == 1
        }
        guard try version < Self.schemaVersion || hasSketchTable != true || !Self.triggersAreCurrent(in: db) else {
            return
        }
        try db.execute("BEGIN IMMEDIATE")
        do {
            // Another process may have created or upgraded the schema since the check above.
            let current = try db.first("PRAGMA user_version") { Int32($0.int(0)) } ?? 0
            if current == 0 {
                try db.execute(Self.schema)
            } else if current < Self.schemaVersion, let migration = Self.migration(fromVersion: current) {
                try db.execute(migration)
            }
            if !(try Self.triggersAreCurrent(in: db)) { try db.execute(Self.replaceTriggers) }
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")  // the schema error is the one to report
            throw error
        }
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
                .diskFull, "The disk holding \(root) is full: free space or lower the cache's size limit.",
                cause: sqlite)
        }
        return StashError(.io, "The cache index \(databasePath) failed.", cause: sqlite)
    }
}
