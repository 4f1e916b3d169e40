import CSQLite
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The first copy of SQLite's WAL-index header, read from the index's `-shm` file, which
/// changes with every commit (its change counter, last frame and frame checksums) and with
/// every restart of the WAL (its salts), in this process or any other.
///
/// A reader connection keeps its read transaction open between lookups for as long as this
/// header is unchanged: a lookup then costs no locking system calls (SQLite takes and drops
/// an `fcntl` read lock on the `-shm` file for every transaction, two system calls that cost
/// more than the lookup itself), and the connection's page cache stays valid. Whenever the
/// header differs from the one the transaction started under, the reader ends it and starts
/// a new one, so a lookup always sees every commit that finished before it began.
///
/// The layout is SQLite's documented WAL-index format (sqlite.org/walformat.html, unchanged
/// since 3.7.0): 48 bytes, `iVersion` 3007000 first. Any other version leaves the header unwatched,
/// and readers fall back to one transaction per lookup.
struct WALHeader: Equatable {
    static let size = 48
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

    static func == (a: WALHeader, b: WALHeader) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
            && a.words.3 == b.words.3 && a.words.4 == b.words.4 && a.words.5 == b.words.5
    }
}

extension SQLiteConnection {
    /// SQLite's own mapping of the WAL-index header of this connection's database, or `nil`
    /// when it has none (not in WAL mode) or an unknown layout.
    ///
    /// The pointer comes from the VFS's `xShmMap` on the connection's database file, i.e. the
    /// mapping SQLite itself reads, and stays valid until the connection closes. Call it after
    /// the connection has read once (which attaches it to the `-shm` file). The file is never
    /// opened a second time: closing a descriptor of it would drop every `fcntl` lock this
    /// process holds on it, SQLite's included, and let another process truncate it under
    /// SQLite's mapping.
    func mapWALHeader() -> UnsafeRawPointer? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let methods = file.pointee.pMethods, methods.pointee.iVersion >= 2,
            let shmMap = methods.pointee.xShmMap
        else { return nil }
        var region: UnsafeMutableRawPointer?
        guard shmMap(file, 0, 32_768, 0, &region) == SQLITE_OK, let region else { return nil }
        guard region.loadUnaligned(as: UInt32.self) == 3_007_000 else { return nil }
        return UnsafeRawPointer(region)
    }

    /// The header as it is now, or `nil` without a mapping.
    func currentWALHeader() -> WALHeader? {
        guard let walHeader else { return nil }
        var header = WALHeader()
        withUnsafeMutableBytes(of: &header.words) { destination in
            // memcpy, not a Swift load: the compiler must not assume the bytes stay the same.
            _ = memcpy(destination.baseAddress!, walHeader, WALHeader.size)
        }
        return header
    }

    /// Makes sure the connection's open read transaction (if any) still sees the latest commit:
    /// starts one when none is open, or when `header` (read by the caller before this call)
    /// differs from the one it started under.
    ///
    /// The transaction's snapshot is taken by the first statement that reads after `BEGIN`,
    /// i.e. after `header` was read, so it includes every commit that changed the header before.
    /// - Returns: Whether a new transaction was started.
    @discardableResult
    func refreshSnapshot(to header: WALHeader) throws(SQLiteError) -> Bool {
        if let snapshot, snapshot == header { return false }
        endSnapshot()
        try executeCached("BEGIN")
        snapshot = header
        return true
    }

    /// Ends the open read transaction, if any, so that SQLite can checkpoint past it.
    func endSnapshot() {
        guard snapshot != nil else { return }
        snapshot = nil
        // A read-only transaction: COMMIT cannot fail for want of anything to write. If SQLite
        // had already ended it (after an error), COMMIT reports that and there is nothing to do.
        try? executeCached("COMMIT")
    }
}
