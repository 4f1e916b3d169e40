import Foundation
import Testing

@testable import Stash

/// The read path since schema 2: a lookup by the key's id, inside a read transaction
/// kept open while nothing commits; ids that collide or predate schema 2; the background
/// checkpoint; bounded eviction batches.
@Suite struct DiskIndexHotPathTests {
    static func open(_ dir: URL, _ configuration: DiskCache.Configuration = .init(sizeLimit: .megabytes(50)))
        throws -> DiskCache
    {
        // The commit-per-store mode: these tests look at the index after each store commits.
        var configuration = configuration
        configuration.writeMode = .immediate
        return try DiskCache(directory: dir, configuration: configuration)
    }

    /// A cache whose writer tries to restart the WAL from 1000 pages, holding 200 entries of
    /// 1,500 bytes (`k0` to `k199`), and its checkpointer.
    static func openWith200Entries(_ dir: URL) throws -> (DiskCache, IndexCheckpointer) {
        let cache = try open(dir)
        let checkpointer = cache.index.checkpointer
        checkpointer.restartPages = 1000
        for i in 0..<200 { try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)") }
        return (cache, checkpointer)
    }

    static func rawIndex(_ dir: URL, busyTimeout: Duration = .seconds(5)) throws -> SQLiteConnection {
        try SQLiteConnection(
            path: DiskIndex.databasePath(inRoot: dir.standardizedFileURL.path), busyTimeout: busyTimeout,
            createsFile: false)
    }

    /// Runs `sql` on the closed cache's index in one transaction, as an older Stash or damage
    /// would have left it.
    static func rewrite(_ dir: URL, _ sql: String) throws {
        let raw = try rawIndex(dir)
        defer { raw.close() }
        try raw.execute("BEGIN;\n\(sql)\nCOMMIT;")
    }

    /// Every row `sql` returns from `cache`'s index, mapped.
    static func rows<T>(of cache: DiskCache, _ sql: String, _ map: (SQLiteRow) -> T) throws -> [T] {
        try cache.index.read { db in
            var rows: [T] = []
            try db.query(sql) { rows.append(map($0)) }
            return rows
        }
    }

    @Test func aBurstOfHitsRunsInOneReadTransaction() throws {
        try withTemporaryDirectory { dir in
            // No background write of the hits during the loop: it would be a commit.
            let cache = try Self.open(dir, .init(sizeLimit: .megabytes(50), accessFlushDelay: .seconds(3600)))
            cache.index.snapshotIdleRelease = 3600  // a loaded machine may pause the loop
            for i in 0..<50 { try cache.store(pattern(700, seed: UInt64(i)), forKey: "k\(i)") }
            _ = try cache.data(forKey: "k0")
            let before = cache.index.snapshotStarts.withLock { $0 }
            #expect(before >= 1)  // reads do run in transactions of their own
            for round in 0..<20 {
                for i in 0..<50 {
                    #expect(try cache.data(forKey: "k\(i)") == pattern(700, seed: UInt64(i)), "\(round)")
                }
            }
            // 1000 reads and nothing committed: the first read's transaction serves them all.
            #expect(cache.index.snapshotStarts.withLock { $0 } == before)
        }
    }

    @Test func aReadSeesEveryCommitOfAnotherConnectionThatFinishedBeforeIt() throws {
        try withTemporaryDirectory { dir in
            let reader = try Self.open(dir)
            let writer = try Self.open(dir)  // its own index connections, as another process has
            #expect(try reader.data(forKey: "probe") == nil)
            for round in 0..<200 {
                let value = pattern(100 + round, seed: UInt64(round))
                try writer.store(value, forKey: "k")
                #expect(try reader.data(forKey: "k") == value, "round \(round): the store")
                #expect(try reader.containsData(forKey: "k"), "round \(round)")
                if round % 2 == 0 {
                    try writer.removeData(forKey: "k")
                    #expect(try reader.data(forKey: "k") == nil, "round \(round): the removal")
                    #expect(try !reader.containsData(forKey: "k"), "round \(round)")
                }
            }
        }
    }

    @Test func anIdleReaderEndsItsTransactionSoThatACheckpointCanFinish() throws {
        try withTemporaryDirectory { dir in
            let reader = try Self.open(dir)
            reader.index.snapshotIdleRelease = 3600  // released by hand below
            let writer = try Self.open(dir)
            try writer.store(pattern(500, seed: 1), forKey: "a")
            #expect(try reader.data(forKey: "a") != nil)  // the reader now holds a snapshot
            for i in 0..<20 { try writer.store(pattern(500, seed: UInt64(i)), forKey: "b\(i)") }
            let raw = try Self.rawIndex(dir, busyTimeout: .milliseconds(100))
            defer { raw.close() }
            // wal_checkpoint(TRUNCATE) reports busy = 1 while a reader uses the WAL.
            let busyWhileHeld = try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
            #expect(busyWhileHeld == 1)
            reader.index.releaseIdleSnapshots()
            let busyAfterRelease = try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
            #expect(busyAfterRelease == 0)
            #expect(try reader.data(forKey: "b19") == pattern(500, seed: 19))
        }
    }

    /// Readers kept for other threads (each thread has a slot of its own) let a checkpoint
    /// finish once released, and closing the cache closes them.
    @Test func readersKeptForOtherThreadsAreReleasedAndClosedWithTheCache() throws {
        try withTemporaryDirectory { dir in
            let reader = try Self.open(dir)
            reader.index.snapshotIdleRelease = 3600  // released by hand below
            let writer = try Self.open(dir)
            try writer.store(pattern(500, seed: 1), forKey: "a")
            let finished = DispatchGroup()
            let hits = LockedValue(0)
            for _ in 0..<4 {
                finished.enter()
                Thread {
                    if (try? reader.data(forKey: "a")) == pattern(500, seed: 1) { hits.withLock { $0 += 1 } }
                    finished.leave()
                }.start()
            }
            finished.wait()
            #expect(hits.withLock { $0 } == 4)
            for i in 0..<20 { try writer.store(pattern(500, seed: UInt64(i)), forKey: "b\(i)") }
            let raw = try Self.rawIndex(dir, busyTimeout: .milliseconds(100))
            #expect(try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) } == 1)
            reader.index.releaseIdleSnapshots()
            #expect(try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) } == 0)
            raw.close()
            writer.close()
            // What is left open on the index is the reader's: one connection per thread that
            // read, or fewer where threads shared a slot or the pool.
            // Counted on Linux only, where /proc/self/fd names the file behind each descriptor.
            #if os(Linux)
                let index = DiskIndex.databasePath(inRoot: dir.standardizedFileURL.path)
                func openDescriptors() -> Int {
                    let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                    return links.filter {
                        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == index
                    }.count
                }
                #expect(openDescriptors() >= 1)
                reader.close()
                #expect(openDescriptors() == 0)
            #else
                reader.close()
            #endif
        }
    }

    /// A reader kept for a thread is released on its own once idle for `snapshotIdleRelease`,
    /// so a checkpoint can finish without anyone calling the release.
    @Test func readersKeptForOtherThreadsAreReleasedWhenIdle() throws {
        try withTemporaryDirectory { dir in
            let reader = try Self.open(dir)
            reader.index.snapshotIdleRelease = 5
            let writer = try Self.open(dir)
            try writer.store(pattern(500, seed: 1), forKey: "a")
            let finished = DispatchGroup()
            finished.enter()
            Thread {
                _ = try? reader.data(forKey: "a")
                finished.leave()
            }.start()
            finished.wait()
            for i in 0..<20 { try writer.store(pattern(500, seed: UInt64(i)), forKey: "b\(i)") }
            let raw = try Self.rawIndex(dir, busyTimeout: .milliseconds(100))
            // Well within the five seconds, the thread's reader still holds its snapshot.
            #expect(try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) } == 1)
            // Then it lets go by itself: polled, with a deadline far beyond the delay.
            let deadline = Date().addingTimeInterval(30)
            var isBusy = 1
            while isBusy == 1, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                isBusy = try raw.first("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) } ?? 1
            }
            #expect(isBusy == 0)
            raw.close()
            writer.close()
            reader.close()
        }
    }

    @Test func anEntryNotUnderItsKeysIdIsFoundThroughTheKeyIndex() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            try cache.store(pattern(300, seed: 1), forKey: "a")
            let idOfB = DiskCache.entryID(forKey: Data("b".utf8))
            // Move "a" onto the id that "b" hashes to, as a collision would have placed it.
            try cache.index.write { db in
                try db.run(
                    "UPDATE entries SET id = ?1, displaced = 1 WHERE key = ?2",
                    [.integer(idOfB), .blob(Data("a".utf8))])
                try db.run("UPDATE totals SET displaced = displaced + 1 WHERE id = 1")  // as a store does
            }
            try cache.store(pattern(400, seed: 2), forKey: "b")  // its id is taken: it gets another
            let idOfStoredB = try cache.index.read { db in
                try db.first("SELECT id FROM entries WHERE key = ?1", [.blob(Data("b".utf8))]) { $0.int64(0) }
            }
            #expect(idOfStoredB != idOfB)
            #expect(idOfStoredB.map { $0 < 0 } == true)  // a displaced id never equals a key's
            #expect(try cache.index.read { db in try db.first("SELECT displaced FROM totals") { $0.int(0) } } == 2)
            #expect(try cache.data(forKey: "a") == pattern(300, seed: 1))
            #expect(try cache.data(forKey: "b") == pattern(400, seed: 2))
            #expect(try cache.containsData(forKey: "b"))
            try cache.removeData(forKey: "a")  // "b"'s own id is free now; "b" is elsewhere
            #expect(try cache.data(forKey: "b") == pattern(400, seed: 2))
            #expect(try cache.data(forKey: "a") == nil)
            // Storing "b" again replaces its displaced entry rather than adding one at its freed id.
            try cache.store(pattern(500, seed: 3), forKey: "b")
            let rowsOfB = try Self.rows(of: cache, "SELECT id FROM entries WHERE key = CAST('b' AS BLOB)") {
                $0.int64(0)
            }
            #expect(rowsOfB == [idOfStoredB!])
            #expect(try cache.data(forKey: "b") == pattern(500, seed: 3))
            #expect(try cache.pin("b"))
            #expect(try cache.attributes(forKey: "b")?.isPinned == true)
            #expect(try cache.updateMetadata(DiskCache.Metadata(etag: "\"v3\""), forKey: "b"))
            #expect(try cache.attributes(forKey: "b")?.metadata.etag == "\"v3\"")
            try cache.removeData(forKey: "b")
            #expect(try cache.containsData(forKey: "b") == false)
            #expect(try cache.index.read { db in try db.first("SELECT count(*) FROM entries") { $0.int(0) } } == 0)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func aNewIndexHasNoKeyIndexButTheDisplacedEntriesOne() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            try cache.store(pattern(300, seed: 1), forKey: "a")
            let indexes = try Self.rows(
                of: cache, "SELECT name, \"unique\", partial FROM pragma_index_list('entries') ORDER BY name"
            ) { "\($0.text(0)!) unique=\($0.int(1)) partial=\($0.int(2))" }
            // A store writes the entry's row, its id, its state's rank and (for files) its file
            // name: no key index.
            #expect(
                indexes == [
                    "entries_by_expiry unique=0 partial=1", "entries_by_file unique=1 partial=1",
                    "entries_by_id unique=1 partial=0", "entries_displaced_keys unique=1 partial=1",
                ])
        }
    }

    @Test func checkpointsRunInTheBackgroundAndTheWALStaysBounded() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            let checkpointed = DiskCacheAccessFlushTests.Signal()
            let threads = LockedValue<Set<Bool>>([])
            cache.index.checkpointer.didCheckpoint = {
                threads.withLock { _ = $0.insert(Thread.isMainThread) }
                checkpointed.fire()
            }
            // About five pages a store: 1000 WAL pages are crossed well before 1000 stores.
            for i in 0..<1000 { try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(checkpointed.wait())
            #expect(threads.withLock { $0 } == [false])
            let raw = try Self.rawIndex(dir)
            defer { raw.close() }
            // What the background checkpoint copied is in the database file: everything reads.
            #expect(try raw.first("SELECT count(*) FROM entries WHERE data IS NOT NULL") { $0.int(0) } == 1000)
        }
    }

    /// A writer that never pauses: a background checkpoint never finds the WAL wholly copied
    /// when a write starts, so without the writer's own checkpoint the WAL never started over
    /// and grew by every store (15 000 pages here; past 1 GB for 30 000 stores of 1 KiB).
    @Test func aWriterThatNeverPausesStillStartsTheWALOver() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            let checkpointer = cache.index.checkpointer
            checkpointer.restartPages = 1000
            var longest: Int32 = 0
            // About five pages a store: 15 000 pages, seven times the most the WAL may hold.
            for i in 0..<3000 {
                try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)")
                longest = max(longest, checkpointer.wal.pages)
            }
            // At most twice the restart length, plus the frames of the commit that crossed it.
            #expect(longest <= 2 * 1000 + 50, "\(longest)")
            #expect(checkpointer.wal.restarts >= 5, "\(checkpointer.wal.restarts)")
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.path + "/index.sqlite-wal")
            let walBytes = (attributes[.size] as? Int) ?? .max
            let mostFrames = 2 * 1000 + 50
            #expect(walBytes <= 32 + mostFrames * (4096 + 24), "\(walBytes)")
            for i in stride(from: 0, to: 3000, by: 7) {
                #expect(try cache.data(forKey: "k\(i)") == pattern(1500, seed: UInt64(i)))
            }
            #expect(try cache.verify().isHealthy)
        }
    }

    /// The same writer while two threads read without a pause.
    ///
    /// As `stash serve`'s disk threads do under load: a reader keeps its read transaction between
    /// reads (until the next commit), and a reader in the middle of a read holds the snapshot of
    /// an earlier commit, so the writer's checkpoint never found the WAL wholly copied and the WAL
    /// never started over (26,000 pages here). At a million 1 KiB entries behind `stash serve` it
    /// had grown to 7.4 GB (the index: 2.1 GB).
    @Test func theWALStartsOverWhileOtherThreadsReadWithoutAPause() throws {
        try withTemporaryDirectory { dir in
            let (cache, checkpointer) = try Self.openWith200Entries(dir)
            let done = LockedValue(false)
            let reads = LockedValue(0)
            let readers = DispatchGroup()
            for thread in 0..<2 {
                DispatchQueue.global().async(group: readers) {
                    var i = thread
                    while !done.withLock({ $0 }) {
                        i = (i &* 7 &+ 13) % 200
                        _ = try? cache.data(forKey: "k\(i)")
                        reads.withLock { $0 += 1 }
                    }
                }
            }
            var longest: Int32 = 0
            for i in 200..<3200 {
                try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)")
                longest = max(longest, checkpointer.wal.pages)
            }
            done.withLock { $0 = true }
            readers.wait()
            #expect(reads.withLock { $0 } > 3000)
            // Twice the restart length, plus the commit that crossed it, as without readers; plus
            // one attempt `pages` frames later, since a reader held up past the writer's 20 ms wait
            // makes an attempt miss (the WAL reached 2,122-2,139 pages in 2 of about 20 runs).
            #expect(longest <= 3 * 1000 + 50, "\(longest)")
            #expect(checkpointer.wal.restarts >= 5, "\(checkpointer.wal.restarts)")
            for i in stride(from: 0, to: 3200, by: 7) {
                #expect(try cache.data(forKey: "k\(i)") == pattern(1500, seed: UInt64(i)))
            }
        }
    }

    /// A reader that holds its read transaction (as another process can) keeps the WAL from
    /// starting over; the writer's restart attempt waits for it at most ``IndexCheckpointer/restartWait``
    /// (20 ms), not the index's 5 s busy timeout, and the WAL starts over at the first attempt
    /// after the reader lets go.
    @Test func aReaderThatHoldsItsTransactionCostsEachRestartAttemptOnlyAShortWait() throws {
        try withTemporaryDirectory { dir in
            let (cache, checkpointer) = try Self.openWith200Entries(dir)
            let foreign = try Self.rawIndex(dir)
            defer { foreign.close() }
            try foreign.execute("BEGIN")
            #expect(try foreign.first("SELECT count(*) FROM entries") { $0.int(0) } == 200)
            var slowest = Duration.zero
            let clock = ContinuousClock()
            for i in 200..<3200 {
                let started = clock.now
                try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)")
                slowest = max(slowest, clock.now - started)
            }
            // The WAL went past its limits and could not start over. (It may have once, early: a
            // reader whose snapshot began with every frame copied reads the database file alone,
            // and SQLite lets the WAL start over under it; seen once under AddressSanitizer.)
            #expect(checkpointer.wal.pages > 2 * 1000, "\(checkpointer.wal.pages)")
            #expect(checkpointer.readersLetGo)
            // An attempt that waited the busy timeout would have taken 5 s.
            #expect(slowest < .seconds(1), "\(slowest)")
            // The held snapshot is still the one it began with.
            #expect(try foreign.first("SELECT count(*) FROM entries") { $0.int(0) } == 200)
            try foreign.execute("COMMIT")
            let restartsWhileHeld = checkpointer.wal.restarts
            var peakAfter: Int32 = 0
            for i in 3200..<4400 {
                try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)")
                if checkpointer.wal.restarts > restartsWhileHeld { peakAfter = max(peakAfter, checkpointer.wal.pages) }
            }
            // Started over, and bounded again as without the reader.
            #expect(checkpointer.wal.restarts > restartsWhileHeld)
            #expect(peakAfter <= 2 * 1000 + 50, "\(peakAfter)")
            for i in stride(from: 0, to: 4400, by: 11) {
                #expect(try cache.data(forKey: "k\(i)") == pattern(1500, seed: UInt64(i)))
            }
        }
    }

    /// In a larger index the WAL's restart limits grow with it.
    ///
    /// An eighth of its pages before a cheap restart, a quarter in any case: a restart's sync is
    /// slow in a large index. With fixed limits of `restartPages` and twice that, the WAL
    /// restarted every 10 to 25 pages here.
    @Test func theWALsRestartLimitsGrowWithTheIndex() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try Self.open(dir)
                for i in 0..<4000 { try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)") }
                cache.close()
            }
            func indexPages() -> Int32 { Int32((POSIXFile.size(dir.path + "/index.sqlite")?.logical ?? 0) / 4096) }
            let cache = try Self.open(dir)
            let checkpointer = cache.index.checkpointer
            checkpointer.restartPages = 10
            let pagesAtOpen = indexPages()
            #expect(pagesAtOpen >= 1500, "\(pagesAtOpen)")
            var peaks: [Int32] = []
            var previous = checkpointer.wal
            for i in 4000..<5000 {
                try cache.store(pattern(1500, seed: UInt64(i)), forKey: "k\(i)")
                let now = checkpointer.wal
                if now.restarts > previous.restarts { peaks.append(previous.pages) }
                previous = now
            }
            // No restart before an eighth of the index; always one by a quarter of it (as large
            // as it grew), plus the frames of the commit that crossed it.
            #expect(!peaks.isEmpty)
            #expect(peaks.allSatisfy { $0 >= pagesAtOpen / 8 }, "\(peaks), index \(pagesAtOpen) pages")
            #expect(peaks.allSatisfy { $0 <= indexPages() / 4 + 50 }, "\(peaks), index \(indexPages()) pages")
            #expect(try cache.data(forKey: "k4999") == pattern(1500, seed: 4999))
        }
    }

    /// What SQLite's planner does with `sql`: one line per step of `EXPLAIN QUERY PLAN`.
    static func plan(of sql: String, _ bindings: [SQLiteValue], in db: SQLiteConnection) throws -> [String] {
        var steps: [String] = []
        try db.query("EXPLAIN QUERY PLAN " + sql, bindings) { steps.append($0.text(3) ?? "") }
        return steps
    }

    @Test func everyStatementOfAnEvictionSearchesAnIndexAndSortsNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            for i in 0..<400 {
                try cache.store(
                    pattern(100, seed: UInt64(i)), forKey: "k\(i)", timeToLive: i.isMultiple(of: 2) ? .seconds(60) : nil
                )
            }
            cache.close()
            let db = try Self.rawIndex(dir)
            // The candidates come from the states (`s`) in rank order, each joined to its entry by
            // row number.
            let statements: [(sql: String, bindings: [SQLiteValue], search: String)] = [
                (
                    DiskCache.expiredEntriesQuery, [.real(0), .integer(-1), .int(1024)],
                    "SEARCH entries USING INDEX entries_by_expiry"
                ),
                (
                    DiskCache.SQLiteEvictionIndex.candidatesQuery, [.int(0), .integer(.min), .integer(-1), .int(16)],
                    "SEARCH s USING INDEX states_by_rank"
                ),
                (
                    DiskCache.SQLiteEvictionIndex.candidatesQuery, [.int(1), .integer(.min), .integer(-1), .int(1)],
                    "SEARCH s USING INDEX states_by_rank"
                ),
            ]
            for statement in statements {
                let plan = try Self.plan(of: statement.sql, statement.bindings, in: db)
                #expect(plan.contains { $0.hasPrefix(statement.search) }, "\(plan)")
                #expect(!plan.contains { $0.hasPrefix("SCAN") || $0.contains("TEMP B-TREE") }, "\(plan)")
            }
            let join = try Self.plan(
                of: DiskCache.SQLiteEvictionIndex.candidatesQuery, [.int(0), .integer(.min), .integer(-1), .int(16)],
                in: db)
            #expect(join.contains { $0.hasPrefix("SEARCH e USING INTEGER PRIMARY KEY") }, "\(join)")
        }
    }

    @Test func anEvictionBatchStopsAtTheBoundBeyondWhatTheWriteNeeds() throws {
        for (bound, expectedEvictions) in [(ByteCount?.some(.mebibytes(1)), 17), (nil, 65)] {
            try withTemporaryDirectory { dir in
                let cache = try Self.open(
                    dir,
                    .init(
                        sizeLimit: .mebibytes(8), lowWaterMark: 0.5, maximumEvictionBatch: bound,
                        evictionPolicy: .firstInFirstOut))
                for i in 0..<128 { try cache.store(pattern(65_536, seed: UInt64(i)), forKey: "k\(i)") }
                #expect(cache.statistics.evictions == 0)
                try cache.store(pattern(65_536, seed: 999), forKey: "new")
                // 129 × 64 KiB; down to max(4 MiB, 8 MiB − 1 MiB) = 7 MiB with the bound, 4 MiB without.
                #expect(cache.statistics.evictions == expectedEvictions, "bound \(String(describing: bound))")
                #expect(try cache.containsData(forKey: "new"))
            }
        }
    }

    @Test func aZeroEvictionBoundIsRefused() throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("cache")
            #expect {
                _ = try Self.open(dir, .init(sizeLimit: .megabytes(1), maximumEvictionBatch: .bytes(0)))
            } throws: { error in
                (error as? StashError)?.code == .invalidArgument
                    && (error as? StashError)?.message.contains("maximumEvictionBatch") == true
            }
            #expect(!FileManager.default.fileExists(atPath: dir.path))  // and nothing was created
        }
    }
}
