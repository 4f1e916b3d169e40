import CSQLite
import Foundation

/// Checkpoints of the index's WAL, off the writer's path.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that
/// store then also copies a thousand pages into the database file and waits for two
/// `fdatasync`s (17 % of all the time spent storing small values, measured with perf). Instead
/// the writer's WAL hook schedules a passive checkpoint on a background queue, on a connection
/// of its own, which neither waits for nor blocks readers and writers.
///
/// A background checkpoint alone never lets a busy writer start the WAL over: SQLite rewinds
/// the WAL only at a write that begins when every frame has been copied, and a writer that
/// keeps committing adds frames while the checkpoint copies (which costs about as much as the
/// writes: each frame is read, written again and synced). Measured: 30 000 stores of 1 KiB in a
/// row grew the WAL of a 16 MB index past 1 GB, every frame written to newly allocated blocks,
/// and closing the cache then copied it all. A restart from the background does not work
/// either: `wal_checkpoint(RESTART)` holds the write lock while it copies and syncs what is
/// left, and took 10-60 ms, stalling stores. So the writer finishes a checkpoint itself, right
/// after a commit, and its next write starts the WAL over:
/// * once the WAL is `restartPages` long, or an eighth of the database's pages if that is more,
///   at a commit that finds no background checkpoint queued or running and at most
///   `cheapRestartPages` frames written since the last one's copy (a writer that pauses now and
///   then, as an application's does, restarts the WAL at the cost of a short copy);
/// * at twice that length (`2 × restartPages` or a quarter of the database) in any case, after
///   waiting for the background checkpoint: the copy of what was committed since it began, and
///   an `fdatasync`, are then that store's to wait for. The WAL stays within 64 MiB or a quarter
///   of the index while no other process holds a read transaction open.
///
/// Readers must let go for a restart. A reader keeps its read transaction between reads until
/// the next commit (see `WALHeader`), and one in the middle of a read holds an earlier commit's
/// snapshot: under reads without a pause (`stash serve`'s disk threads under load) a passive
/// checkpoint right after a commit never found every frame copyable, and the WAL never started
/// over (7.4 GB beside a 2.1 GB index after a million stores). So from the length at which the
/// writer first tries a restart until the WAL starts over, readers end their transaction after
/// each read (``readersLetGo``), and the writer's checkpoint is a `RESTART` that waits up to
/// ``restartWait`` for the reads under way to end: it copies every frame and leaves no reader
/// on the WAL, and the next write starts it over. A reader that holds its transaction longer (of
/// another process, or one of this process that the scheduler held up) makes the attempt end
/// after that wait, and it comes again `pages` frames later.
///
/// The waits are the price of the bound under a burst of writes: the checkpoints' syncs of
/// pages all over a large index are slower than the writes, and an unbounded WAL only deferred
/// them. Even the short copy's `fdatasync` took 90-150 ms at a million entries (a 1.6 GB
/// index), so the limits grow with the index: with fixed limits of 8000 and 16 000 pages, a
/// 1 KiB store there cost 80-107 µs in a burst of 5000 against 62 µs with no restart
/// (`Benchmarks/run-scaling.sh`, 3 rounds each, 2026-11-25).
final class IndexCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is touched only on `queue`; `state` and `walLength` only under
    // their locks; `nextCheckpointAt`, `nextRestartAt` and `restartLimits` only by the WAL hook
    // (the writer, under its lock) and by a test setting `restartPages` before it writes.
    /// WAL pages after which a commit schedules a checkpoint (SQLite's own default threshold).
    static let pages: Int32 = 1000

    private let databasePath: String
    private let busyTimeout: Duration
    private let queue = DispatchQueue(label: "Stash.DiskIndex.checkpoint", qos: .utility)
    /// Whether a background checkpoint is queued (not started yet), whether one is queued or
    /// running, and how many WAL frames the last one left copied.
    private let state = LockedValue((isScheduled: false, isBusy: false, copied: Int32(0)))
    private var connection: SQLiteConnection?
    /// At most this many frames left to copy make the writer's own checkpoint cheap enough to
    /// run before the WAL reaches twice `restartPages`.
    static let cheapRestartPages: Int32 = 256
    /// WAL pages from which the writer finishes a checkpoint itself (32 MiB of 4 KiB pages).
    var restartPages: Int32 = 8 * IndexCheckpointer.pages {
        didSet { (nextRestartAt, restartLimits) = (restartPages, nil) }
    }
    /// The WAL length (in pages) at which the writer's next commit schedules a checkpoint.
    ///
    /// One checkpoint per `pages` new frames. A checkpoint racing the writer rarely leaves the
    /// WAL wholly copied when the next write starts, so the WAL is seldom restarted and stays
    /// over the threshold; checking only "over the threshold" then checkpointed (and synced)
    /// after almost every commit.
    private var nextCheckpointAt = IndexCheckpointer.pages
    /// The WAL length (in pages) from which the writer finishes a checkpoint itself; one
    /// attempt per `pages` new frames (a reader of another process can keep the WAL from
    /// restarting).
    private var nextRestartAt: Int32 = 8 * IndexCheckpointer.pages
    /// The lengths at which the writer restarts the WAL when that is cheap, and in any case;
    /// from the database's size when the WAL first reaches `restartPages` (`nil` before).
    private var restartLimits: (cheap: Int32, always: Int32)?
    /// The WAL's length after the writer's last commit, and how many times it started over
    /// (under a lock: the access log's background flush commits too).
    var wal: (pages: Int32, restarts: Int) { walLength.withLock { $0 } }
    private let walLength = LockedValue((pages: Int32(0), restarts: 0))
    /// Whether readers should end their read transaction after each read: set from the length
    /// at which the writer first tries to restart the WAL, cleared when it started over.
    var readersLetGo: Bool { letGo.withLock { $0 } }
    private let letGo = LockedValue(false)
    /// How long the writer's own checkpoint waits for the reads under way to end (the reads of
    /// this process take microseconds; a reader of another process may hold its transaction).
    static let restartWait: Duration = .milliseconds(20)
    /// Test hook: called on the background queue after each checkpoint.
    var didCheckpoint: (@Sendable () -> Void)?
    /// Ends the read transactions of this process's idle readers, which would keep the WAL
    /// from restarting for as long as they stay open; set by the index.
    var releaseIdleReaders: (@Sendable () -> Void)?

    init(databasePath: String, busyTimeout: Duration) {
        self.databasePath = databasePath
        self.busyTimeout = busyTimeout
    }

    /// Replaces SQLite's automatic checkpoint of `db` (the writer) by a background one.
    func install(on db: SQLiteConnection) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        // The checkpointer outlives the writer connection: both belong to the same DiskIndex,
        // which closes the writer before it goes.
        sqlite3_wal_hook(
            db.handle,
            { context, db, _, pages in
                if let context, let db {
                    let checkpointer = Unmanaged<IndexCheckpointer>.fromOpaque(context).takeUnretainedValue()
                    checkpointer.walGrew(to: pages, writer: db)
                }
                return SQLITE_OK
            }, context)
    }

    /// After each commit of the writer: schedules a checkpoint when the WAL has grown by
    /// `pages` frames since the last one was scheduled (or since it restarted), and finishes
    /// one itself when the WAL is long (see the type's description).
    private func walGrew(to pages: Int32, writer: OpaquePointer) {
        let restarted = walLength.withLock { wal in
            defer { wal.pages = pages }
            guard pages < wal.pages else { return false }
            wal.restarts += 1
            return true
        }
        if restarted {
            // The WAL started over from its beginning.
            letGo.withLock { $0 = false }
            state.withLock { $0.copied = 0 }
            nextCheckpointAt = IndexCheckpointer.pages
            nextRestartAt = restartPages
            restartLimits = nil
        }
        if pages >= nextRestartAt {
            let limits = restartLimits ?? restartLimitsForDatabase()
            restartLimits = limits
            if pages < limits.cheap {
                nextRestartAt = limits.cheap
            } else {
                letGo.withLock { $0 = true }
                let mustWait = pages >= limits.always
                if mustWait { queue.sync {} }
                let isCheap = state.withLock { !$0.isBusy && pages - $0.copied <= Self.cheapRestartPages }
                if mustWait || isCheap {
                    nextRestartAt = pages + IndexCheckpointer.pages
                    releaseIdleReaders?()
                    restartCheckpoint(writer)
                    return
                }
            }
        }
        guard pages >= nextCheckpointAt else { return }
        nextCheckpointAt = pages + IndexCheckpointer.pages
        schedule()
    }

    /// Copies every frame and waits up to ``restartWait`` for the readers on the WAL to leave it,
    /// so that the next write starts it over.
    private func restartCheckpoint(_ writer: OpaquePointer) {
        SQLiteConnection.setBusyTimeout(Self.restartWait, of: writer)
        // Deliberately tolerated: on failure the WAL stays long, and the attempt comes again
        // after `pages` more frames.
        _ = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
        // The writer's own, which it was opened with (the index's).
        SQLiteConnection.setBusyTimeout(busyTimeout, of: writer)
    }

    /// `restartPages` or an eighth of the database file's pages, and twice that or a quarter
    /// (pages of SQLite's default 4 KiB, which the index keeps); one `stat` per WAL cycle.
    private func restartLimitsForDatabase() -> (cheap: Int32, always: Int32) {
        let pages = Int32(clamping: (POSIXFile.size(databasePath)?.logical ?? 0) / 4096)
        return (max(restartPages, pages / 8), max(2 * restartPages, pages / 4))
    }

    private func schedule() {
        let isNew = state.withLock { state in
            defer { (state.isScheduled, state.isBusy) = (true, true) }
            return !state.isScheduled
        }
        guard isNew else { return }
        queue.async { [self] in
            state.withLock { $0.isScheduled = false }
            run()
            state.withLock { state in
                if !state.isScheduled { state.isBusy = false }
            }
        }
    }

    /// Copies what it can of the WAL into the database file now; on the queue.
    private func run() {
        if connection == nil {
            connection = try? SQLiteConnection(path: databasePath, busyTimeout: busyTimeout, createsFile: false)
        }
        // Deliberately tolerated: a failed checkpoint leaves the WAL longer, and the next
        // commit past the threshold schedules another.
        let copied = try? connection?.first("PRAGMA wal_checkpoint(PASSIVE)") { Int32(clamping: $0.int(2)) }
        state.withLock { $0.copied = copied ?? 0 }
        didCheckpoint?()
    }

    /// Waits for a running checkpoint and closes the connection (the database may be replaced
    /// next, by a rebuild or after a deletion).
    func close() {
        queue.sync {
            connection?.close()
            connection = nil
        }
    }
}
