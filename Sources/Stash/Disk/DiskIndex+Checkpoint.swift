import CSQLite
import Foundation

/// Checkpoints of the index's WAL, off the writer's path.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses its threshold: that
/// store then also copies a thousand pages into the database file and waits for two
/// `fdatasync`s (17 % of all the time spent storing small values, measured with perf). Instead
/// the writer's WAL hook schedules a passive checkpoint on a background queue, on a connection
/// of its own, which neither waits for nor blocks readers and writers.
final class IndexCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is touched only on `queue`; `isScheduled` only under its lock.
    /// WAL pages after which a commit schedules a checkpoint (SQLite's own default threshold).
    static let pages: Int32 = 1000

    private let databasePath: String
    private let busyTimeout: Duration
    private let queue = DispatchQueue(label: "Stash.DiskIndex.checkpoint", qos: .utility)
    private let isScheduled = LockedValue(false)
    private var connection: SQLiteConnection?
    /// The WAL length (in pages) at which the writer's next commit schedules a checkpoint.
    ///
    /// One checkpoint per `pages` new frames. A checkpoint racing the writer rarely leaves the
    /// WAL wholly copied when the next write starts, so the WAL is seldom restarted and stays
    /// over the threshold; checking only "over the threshold" then checkpointed (and synced)
    /// after almost every commit. Touched only by the wal hook, i.e. by the writer under its
    /// lock.
    private var nextCheckpointAt = IndexCheckpointer.pages
    /// Test hook: called on the background queue after each checkpoint.
    var didCheckpoint: (@Sendable () -> Void)?

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
            { context, _, _, pages in
                if let context {
                    Unmanaged<IndexCheckpointer>.fromOpaque(context).takeUnretainedValue().walGrew(to: pages)
                }
                return SQLITE_OK
            }, context)
    }

    /// After each commit of the writer: schedules a checkpoint when the WAL has grown by
    /// `pages` frames since the last one was scheduled (or since it restarted).
    private func walGrew(to pages: Int32) {
        if pages < nextCheckpointAt - IndexCheckpointer.pages {
            nextCheckpointAt = IndexCheckpointer.pages  // the WAL restarted from its beginning
        }
        guard pages >= nextCheckpointAt else { return }
        nextCheckpointAt = pages + IndexCheckpointer.pages
        schedule()
    }

    private func schedule() {
        let isNew = isScheduled.withLock { scheduled in
            defer { scheduled = true }
            return !scheduled
        }
        guard isNew else { return }
        queue.async { [self] in
            isScheduled.withLock { $0 = false }
            run()
        }
    }

    /// Copies what it can of the WAL into the database file now; on the queue.
    private func run() {
        if connection == nil {
            connection = try? SQLiteConnection(path: databasePath, busyTimeout: busyTimeout, createsFile: false)
        }
        // Deliberately tolerated: a failed checkpoint leaves the WAL longer, and the next
        // commit past the threshold schedules another.
        try? connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
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
