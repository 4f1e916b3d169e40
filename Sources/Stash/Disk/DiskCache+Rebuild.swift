import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// What one rebuild of the index from the value files found.
    ///
    /// The latest one is kept in the cache directory (`last-rebuild.json`) and returned by
    /// ``lastIndexRebuild``, so that a later process (`stash info`) can report it.
    public struct IndexRebuild: Sendable, Hashable, Codable, CustomStringConvertible {
        /// When the rebuild finished.
        public var date: Date
        /// Why the index was rebuilt (missing, damaged header, truncated, garbage WAL, …).
        public var reason: String
        /// Entries recovered from self-describing value files (and intact inline rows of the
        /// old index, when it could still be read).
        public var recovered: Int
        /// Value files that could not be recovered: no readable description beside them
        /// (written by a version of Stash before 0.2, or damaged), or a length that disagrees
        /// with their description.
        public var lost: Int
        /// Where the old index was moved, or `nil` when there was none.
        public var movedTo: String?

        /// A one-line summary.
        public var description: String {
            "index rebuilt (\(reason)): \(recovered) entries recovered, \(lost) lost"
                + (movedTo.map { "; the old index was moved to \($0)" } ?? "")
        }
    }

    /// The most recent index rebuild in this directory, by any process, or `nil`.
    ///
    /// - Complexity: O(1).
    public var lastIndexRebuild: IndexRebuild? {
        IndexRecovery.lastRebuild(inRoot: root)
    }

    /// Moves the index aside and rebuilds it from the value files, even when it is healthy.
    ///
    /// Every file-backed entry (and every pinned entry, which always lives in a file) comes
    /// back with its key, bytes, pinned state, expiry and metadata; inline unpinned entries
    /// come back from the old index when it can still be read. Eviction order restarts from
    /// the files' creation times.
    ///
    /// - Returns: What the rebuild recovered.
    /// - Throws: ``StashError`` with ``StashError/Code/readOnly`` for a read-only cache, or
    ///   when the directory cannot be written.
    /// - Complexity: O(*F*) for *F* files in the directory.
    @discardableResult
    public func rebuildIndex() throws -> IndexRebuild {
        try flush()
        try index.throwIfReadOnly()
        backgroundWork.wait()
        _ = try? flushAccesses()  // best effort: only recency is lost
        let rebuild = try index.rebuildDamagedDatabase(reason: "requested")
        discardSketch()
        guard let rebuild = rebuild ?? lastIndexRebuild else {
            throw StashError(.io, "The cache index in \(root) was rebuilt but its record cannot be read.")
        }
        return rebuild
    }
}

/// Detecting a lost or damaged index without reading it whole, and rebuilding it from the
/// value files' sidecars.
///
/// Opening must stay O(1), so the checks read fixed-size headers only: SQLite's
/// `quick_check` took a median 81 ms on a 100 000-entry index of file-backed values (30 MB)
/// and 327 ms with half of them inline (230 MB), against 0.5–0.7 ms for a normal open, so it
/// runs in ``DiskCache/verify(repair:)`` rather than on every open.
enum IndexRecovery {
    static let markerName = "index.sqlite.rebuild-in-progress"
    static let lockName = "index.sqlite.lock"
    static let recordName = "last-rebuild.json"

    /// Why the index of `root` must be rebuilt, or `nil` when the cheap checks find nothing.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/unsupportedVersion`` for an index written by
    ///   a newer version of Stash, which must never be rebuilt over.
    static func damage(inRoot root: String) throws -> String? {
        if access(root + "/" + markerName, F_OK) == 0 { return "an earlier rebuild was interrupted" }
        let database = DiskIndex.databasePath(inRoot: root)
        guard let size = POSIXFile.size(database)?.logical else {
            return hasValueFiles(root) ? "the index is missing" : nil
        }
        if size == 0 { return hasValueFiles(root) ? "the index is empty" : nil }
        guard let header = readPrefix(database, count: 100), header.count == 100,
            header.starts(with: Data("SQLite format 3\0".utf8))
        else { return "the index header is not an SQLite header" }
        let rawPageSize = Int(bigEndian(header, at: 16, width: 2))
        let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { return "the index header is damaged" }
        let version = Int32(bitPattern: UInt32(bigEndian(header, at: 60, width: 4)))
        if version > DiskIndex.schemaVersion {
            throw StashError(
                .unsupportedVersion,
                "The cache index \(database) was written by a newer version of Stash (schema \(version), this version reads \(DiskIndex.schemaVersion)): open it with that version, or choose another directory.",
            )
        }
        let pages = Int(bigEndian(header, at: 28, width: 4))
        let headerPagesValid = bigEndian(header, at: 24, width: 4) == bigEndian(header, at: 92, width: 4)
        if headerPagesValid && pages > 0 && size < pages * pageSize {
            return "the index is truncated (\(size) bytes, its header says \(pages * pageSize))"
        }
        let wal = database + "-wal"
        if let walSize = POSIXFile.size(wal)?.logical {
            if walSize > 0 && !isValidWALHeader(wal, pageSize: pageSize) {
                return "the index's write-ahead log is not one of its own"
            }
        } else if let shm = POSIXFile.size(database + "-shm")?.logical, shm > 0 {
            // SQLite creates the WAL before the shared-memory file and deletes it after; a
            // shared-memory file without its WAL means the WAL, and the commits in it, were lost.
            return "the index's write-ahead log was deleted"
        }
        return nil
    }

    /// Rebuilds the index of `root` if it is (still) damaged, or unconditionally with `force`.
    ///
    /// Holds an exclusive lock on `index.sqlite.lock` throughout, so that concurrent openers wait
    /// and then find the rebuilt index. A marker file exists from before the old index is
    /// moved until the new one is in place, so a rebuild killed midway is redone by the next
    /// open.
    ///
    /// - Returns: What was rebuilt, or `nil` when another process had already done it.
    @discardableResult
    static func rebuild(
        root: String, reason: String?, onEvent: (@Sendable (DiskCache.Event) -> Void)?, force: Bool = false
    ) throws -> DiskCache.IndexRebuild? {
        let lock = try takeLock(root: root, exclusive: true)
        defer { Foundation.close(lock) }
        guard let reason = force ? reason : try damage(inRoot: root) else { return nil }
        let database = DiskIndex.databasePath(inRoot: root)
        do {
            let marker = open(root + "/" + markerName, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard marker >= 0 else { throw POSIXFile.error("create \(root)/\(markerName)") }
            Foundation.close(marker)
            try POSIXFile.syncDirectory(root)
            let movedTo = try moveAside(database)
            let building = database + ".rebuilding"
            for suffix in ["", "-journal", "-wal", "-shm"] { try POSIXFile.remove(building + suffix) }
            var result = try IndexBuilder.build(at: building, root: root, salvaging: movedTo, onEvent: onEvent)
            try POSIXFile.rename(building, database)
            try POSIXFile.syncDirectory(root)
            let record = DiskCache.IndexRebuild(
                date: Date(), reason: reason, recovered: result.recovered, lost: result.lost, movedTo: movedTo)
            // The record is informational: a failure to save it must not fail the open.
            if let data = try? JSONEncoder().encode(record) {
                try? data.write(to: URL(fileURLWithPath: root + "/" + recordName))
            }
            try POSIXFile.remove(root + "/" + markerName)
            result.record = record
            onEvent?(.indexRebuilt(recovered: record.recovered, lost: record.lost))
            onEvent?(.recoveredDamagedIndex(message: "The cache index \(database) was rebuilt: \(record)."))
            return record
        } catch {
            throw StashError(
                .io,
                "Cannot rebuild the cache index \(database) from its files (\(reason)): make the directory writable and open it again.",
                cause: error)
        }
    }

    /// Takes the rebuild lock: shared while opening the index, exclusive while rebuilding it.
    static func takeLock(root: String, exclusive: Bool) throws -> Int32 {
        let path = root + "/" + lockName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXFile.error("open \(path)") }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno == EINTR { continue }
            let failure = POSIXFile.error("flock \(path)")
            Foundation.close(fd)
            throw failure
        }
        return fd
    }

    static func lastRebuild(inRoot root: String) -> DiskCache.IndexRebuild? {
        guard let data = FileManager.default.contents(atPath: root + "/" + recordName) else { return nil }
        return try? JSONDecoder().decode(DiskCache.IndexRebuild.self, from: data)
    }

    /// Renames the index and its WAL files to `index.sqlite.corrupt-<timestamp>…`; never deletes.
    private static func moveAside(_ database: String) throws -> String? {
        guard access(database, F_OK) == 0 || access(database + "-wal", F_OK) == 0 else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var aside = database + ".corrupt-" + formatter.string(from: Date())
        var attempt = 1
        while access(aside, F_OK) == 0 || access(aside + "-wal", F_OK) == 0 {
            attempt += 1
            aside = database + ".corrupt-" + formatter.string(from: Date()) + "-\(attempt)"
        }
        for suffix in ["", "-wal", "-shm"] where access(database + suffix, F_OK) == 0 {
            try POSIXFile.rename(database + suffix, aside + suffix)
        }
        return aside
    }

    private static func hasValueFiles(_ root: String) -> Bool {
        let data = root + "/data"
        for first in POSIXFile.contents(of: data) {
            for second in POSIXFile.contents(of: "\(data)/\(first)") {
                if !POSIXFile.contents(of: "\(data)/\(first)/\(second)").isEmpty { return true }
            }
        }
        return false
    }

    private static func readPrefix(_ path: String, count: Int) -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Foundation.close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = pread(fd, &buffer, count, 0)
        return n < 0 ? nil : Data(buffer[0..<n])
    }

    private static func bigEndian(_ data: Data, at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width { value = value << 8 | UInt64(data[data.startIndex + offset + i]) }
        return value
    }

    /// Whether the WAL's 32-byte header has SQLite's magic, format version, the index's page
    /// size and a correct checksum (SQLite ignores a WAL whose header fails these, silently
    /// dropping the commits it held).
    private static func isValidWALHeader(_ path: String, pageSize: Int) -> Bool {
        guard let header = readPrefix(path, count: 32), header.count == 32 else { return false }
        let magic = bigEndian(header, at: 0, width: 4)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return false }
        guard bigEndian(header, at: 4, width: 4) == 3_007_000, Int(bigEndian(header, at: 8, width: 4)) == pageSize
        else { return false }
        let bigEndianWords = magic & 1 == 1
        var s0: UInt32 = 0
        var s1: UInt32 = 0
        for i in stride(from: 0, to: 24, by: 8) {
            var words: [UInt32] = []
            for j in [i, i + 4] {
                let raw = UInt32(bigEndian(header, at: j, width: 4))
                words.append(bigEndianWords ? raw : raw.byteSwapped)
            }
            s0 = s0 &+ words[0] &+ s1
            s1 = s1 &+ words[1] &+ s0
        }
        return UInt32(bigEndian(header, at: 24, width: 4)) == s0 && UInt32(bigEndian(header, at: 28, width: 4)) == s1
    }
}
