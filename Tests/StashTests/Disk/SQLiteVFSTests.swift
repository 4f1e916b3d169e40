import CSQLite
import CStashVFS
import Foundation
import Testing

@testable import Stash

/// Stash's VFS: a reader keeps its memory map of the database across other connections'
/// commits while the file's size is unchanged, still sees every commit, and maps the file
/// again once it grew.
@Suite struct SQLiteVFSTests {
    /// The two counters a file control of Stash's VFS fills in, or `[]` if it failed.
    static func counterPair(_ control: (UnsafeMutablePointer<Int64>?) -> Int32) -> [Int64] {
        var counts: [Int64] = [-1, -1]
        let rc = counts.withUnsafeMutableBufferPointer { control($0.baseAddress) }
        return rc == SQLITE_OK ? counts : []
    }

    /// Requests to drop `db`'s map of its database file: passed on to SQLite's own VFS, skipped.
    static func unmapCounts(_ db: SQLiteConnection) -> [Int64] {
        counterPair { sqlite3_file_control(db.handle, "main", STASH_FCNTL_UNMAP_COUNTS, $0) }
    }

    /// A new database at `path` in WAL mode with `synchronous = NORMAL` (as the cache's index),
    /// `pragmas` after those, and a table `t (id, v)`.
    static func walDatabase(_ path: String, pragmas: String = "") throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path, busyTimeout: .seconds(5))
        try db.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \(pragmas)"
                + " CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL);")
        return db
    }

    @Test func aReaderKeepsItsMapAcrossCommitsAndMapsAgainOnlyWhenTheFileGrows() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("vfs.sqlite").path
            let writer = try Self.walDatabase(path)
            defer { writer.close() }
            func insert(_ ids: Range<Int>) throws {
                try writer.execute("BEGIN")
                for id in ids {
                    try writer.run("INSERT INTO t VALUES (?1, ?2)", [.int(id), .blob(pattern(1000, seed: UInt64(id)))])
                }
                try writer.execute("COMMIT; PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try insert(0..<200)
            let reader = try SQLiteConnection(path: path, busyTimeout: .seconds(5), createsFile: false)
            defer { reader.close() }
            try reader.execute("PRAGMA mmap_size = 268435456")
            func value(_ id: Int) throws -> Data? {
                try reader.first("SELECT v FROM t WHERE id = ?1", [.int(id)]) { $0.blob(0) ?? Data() }
            }
            #expect(try value(1) == pattern(1000, seed: 1))
            // (A first read transaction asks to drop a map that does not exist yet.)
            #expect(Self.unmapCounts(reader) == [1, 0])

            // A commit to the WAL: the reader sees it and keeps its map.
            try writer.run("UPDATE t SET v = ?1 WHERE id = 1", [.blob(pattern(1000, seed: 1001))])
            #expect(try value(1) == pattern(1000, seed: 1001))
            #expect(Self.unmapCounts(reader) == [1, 1])
            // Copied into the database file, whose size stays: read through the same map.
            try writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try value(1) == pattern(1000, seed: 1001))
            #expect(try value(2) == pattern(1000, seed: 2))
            #expect(Self.unmapCounts(reader) == [1, 2])

            // The file grows: the map is dropped once, and the new pages read.
            try insert(200..<400)
            #expect(try value(399) == pattern(1000, seed: 399))
            #expect(try value(1) == pattern(1000, seed: 1001))
            #expect(Self.unmapCounts(reader) == [2, 2])
        }
    }

    /// Write calls SQLite made on `db`'s WAL file, and those passed on to the default VFS.
    static func walWriteCounts(_ db: SQLiteConnection) -> [Int64] {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(db.handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) == SQLITE_OK,
            let file, let control = file.pointee.pMethods?.pointee.xFileControl
        else { return [] }
        return counterPair { control(file, STASH_FCNTL_WRITE_COUNTS, $0) }
    }

    @Test func aTransactionsWALFramesAreWrittenTogetherAndEveryCommitIsComplete() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("wal.sqlite").path
            // A small page cache: a large transaction spills frames into the WAL before it
            // commits, and rolling back to a savepoint writes over frames already written.
            let writer = try Self.walDatabase(path, pragmas: "PRAGMA cache_size = 20;")
            defer { writer.close() }
            try writer.execute("CREATE INDEX t_by_v ON t (v)")
            let before = Self.walWriteCounts(writer)
            for id in 0..<100 {
                try writer.run("INSERT INTO t VALUES (?1, ?2)", [.int(id), .blob(pattern(1500, seed: UInt64(id)))])
            }
            let after = Self.walWriteCounts(writer)
            #expect(after.count == 2 && before.count == 2)
            // Each commit is several frames (table, index, and their parents), two calls each.
            #expect(after[0] - before[0] >= 100 * 4)
            #expect(after[1] - before[1] == 100)  // one write per commit

            try writer.execute("BEGIN")
            for id in 100..<400 {
                try writer.run("INSERT INTO t VALUES (?1, ?2)", [.int(id), .blob(pattern(1500, seed: UInt64(id)))])
            }
            try writer.execute("SAVEPOINT s")
            for id in 400..<700 {
                try writer.run("INSERT INTO t VALUES (?1, ?2)", [.int(id), .blob(pattern(1500, seed: UInt64(id)))])
            }
            try writer.execute("ROLLBACK TO s")
            for id in 700..<800 {
                try writer.run("INSERT INTO t VALUES (?1, ?2)", [.int(id), .blob(pattern(1500, seed: UInt64(id + 1)))])
            }
            try writer.execute("COMMIT")

            // What a crash right now would leave (the database and WAL files as they are, no
            // WAL index): recovery replays every committed frame, checksums rewritten in place
            // after the commit frame included.
            let copy = dir.appendingPathComponent("copy")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
            for suffix in ["", "-wal"] {
                try FileManager.default.copyItem(
                    atPath: path + suffix, toPath: copy.appendingPathComponent("wal.sqlite" + suffix).path)
            }
            let recovered = try SQLiteConnection(
                path: copy.appendingPathComponent("wal.sqlite").path, busyTimeout: .seconds(5), createsFile: false)
            defer { recovered.close() }
            #expect(try recovered.first("SELECT count(*) FROM t") { $0.int(0) } == 500)
            #expect(try recovered.first("PRAGMA integrity_check") { $0.text(0) } == "ok")

            // Another connection, reading the WAL as it is in the file, sees exactly those rows.
            let reader = try SQLiteConnection(path: path, busyTimeout: .seconds(5), createsFile: false)
            defer { reader.close() }
            #expect(try reader.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
            #expect(try reader.first("SELECT count(*) FROM t") { $0.int(0) } == 500)
            #expect(try reader.first("SELECT count(*) FROM t WHERE id >= 400 AND id < 700") { $0.int(0) } == 0)
            for id in [0, 99, 100, 399, 700, 799] {
                let value = try reader.first("SELECT v FROM t WHERE id = ?1", [.int(id)]) { $0.blob(0) ?? Data() }
                #expect(value == pattern(1500, seed: UInt64(id < 700 ? id : id + 1)), "\(id)")
            }
        }
    }

    @Test func everyCommittedFrameIsInTheFileWhateverTheTransactionsSize() throws {
        try withTemporaryDirectory { dir in
            let path = dir.appendingPathComponent("sizes.sqlite").path
            let writer = try Self.walDatabase(path)
            defer { writer.close() }
            let reader = try SQLiteConnection(path: path, busyTimeout: .seconds(5), createsFile: false)
            defer { reader.close() }
            // Transactions of 1 to 80 pages: some commit frame's page lands just past the gathering
            // buffer's end, where the frames before it are written first and then it alone. As in
            // the cache's index, commits do not sync (a sync would write the frames anyway).
            var total = 0
            for pages in 1...80 {
                try writer.execute("BEGIN")
                for row in 0..<pages {
                    try writer.run(
                        "INSERT INTO t VALUES (?1, ?2)", [.int(total + row), .blob(pattern(3000, seed: UInt64(row)))])
                }
                try writer.execute("COMMIT")
                total += pages
                // Another connection reads what was committed from the WAL file itself.
                #expect(try reader.first("SELECT count(*) FROM t") { $0.int(0) } == total, "\(pages) pages")
                let last = try reader.first("SELECT v FROM t WHERE id = ?1", [.int(total - 1)]) { $0.blob(0) ?? Data() }
                #expect(last == pattern(3000, seed: UInt64(pages - 1)), "\(pages) pages")
            }
            #expect(try reader.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
        }
    }

    /// Registering the VFS turns SQLite's memory statistics off, only if SQLite is not in use yet.
    ///
    /// Their mutex serialised every allocation of concurrent readers. An SQLite that something
    /// else initialized first is left as it was. Each case runs in a fresh process, since the
    /// setting is process-wide and fixed once SQLite initializes.
    @Test func stashTurnsSQLitesMemoryStatisticsOffOnlyWhenItInitializesSQLite() throws {
        try withTemporaryDirectory { root in
            let first = try Worker.run(["memory-statistics", root.appendingPathComponent("first").path])
            #expect(first.status == 0)
            #expect(first.output == "memory-used 0\n")

            let second = try Worker.run([
                "memory-statistics", root.appendingPathComponent("second").path, "sqlite-first",
            ])
            #expect(second.status == 0)
            let used = second.output.split(separator: " ").last.flatMap { Int64($0.dropLast()) }
            #expect((used ?? 0) > 100_000, "SQLite initialized first keeps counting: \(second.output)")
        }
    }
}
