import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// What ``verify(repair:)-9glgg`` found, and what it repaired.
    public struct VerificationReport: Sendable, CustomStringConvertible {
        /// Entries whose bytes were checked.
        public var entriesChecked = 0
        /// Bytes read and checksummed.
        public var bytesChecked = 0
        /// Entries whose value is missing, short, or fails its checksum, with the reason.
        public var damagedEntries: [(key: String, reason: String)] = []
        /// Files in the directory that no entry refers to (left by a crash).
        public var orphanFiles = 0
        /// Bytes in those files.
        public var orphanBytes = 0
        /// Whether the running totals disagreed with the sum of the entries.
        public var totalsMismatch = false
        /// Problems SQLite's integrity check reported in the index itself.
        public var indexProblems: [String] = []
        /// Whether the problems found were repaired (`verify(repair: true)`).
        public var repaired = false
        /// The rebuild of the index from the value files that repairing a damaged index did.
        public var rebuild: IndexRebuild?

        /// `true` when nothing was wrong.
        public var isHealthy: Bool {
            damagedEntries.isEmpty && orphanFiles == 0 && !totalsMismatch && indexProblems.isEmpty
        }

        /// A multi-line human summary.
        public var description: String {
            var lines = [
                "checked \(entriesChecked) entries (\(ByteCount(bytesChecked)))",
                "damaged entries: \(damagedEntries.count)",
                "orphan files: \(orphanFiles) (\(ByteCount(orphanBytes)))",
                "totals: \(totalsMismatch ? "mismatch" : "consistent")",
                "index: \(indexProblems.isEmpty ? "ok" : indexProblems.joined(separator: "; "))",
            ]
            for (key, reason) in damagedEntries.prefix(20) { lines.append("  damaged '\(key)': \(reason)") }
            if let rebuild { lines.append(rebuild.description) }
            if !isHealthy { lines.append(repaired ? "repaired" : "not repaired (run with repair)") }
            return lines.joined(separator: "\n")
        }
    }

    /// Checks the index, every value's length and checksum, the running totals, and looks for
    /// orphan files; with `repair`, drops damaged entries, fixes the totals, removes orphans,
    /// and moves a damaged index aside and rebuilds it from the value files
    /// (``VerificationReport/rebuild``).
    ///
    /// A read-only cache (``isReadOnly``) is checked without changing anything.
    ///
    /// - Parameter repair: Whether to fix what is found. Defaults to `false`.
    /// - Returns: A report of what was found.
    /// - Throws: ``StashError`` when the index cannot be read or written;
    ///   ``StashError/Code/readOnly`` for `repair` on a read-only cache.
    /// - Complexity: O(*N* + *B*): every entry and every stored byte is read.
    public func verify(repair: Bool = false) throws -> VerificationReport {
        try flush()
        if repair { try index.throwIfReadOnly() }
        var report = VerificationReport()
        let integrity: [String]
        do {
            integrity = try index.read { db in
                var lines: [String] = []
                try db.query("PRAGMA integrity_check") { lines.append($0.text(0) ?? "") }
                return lines
            }
        } catch let error as SQLiteError where error.isCorruption {
            integrity = ["\(error)"]
        } catch {
            throw index.indexError(error)
        }
        if integrity != ["ok"] {
            report.indexProblems = integrity
            if repair {
                report.rebuild = try index.rebuildDamagedDatabase(
                    reason: "integrity check: " + integrity.prefix(3).joined(separator: "; "))
                report.orphanFiles = try reclaimOrphans(dryRun: false).count
                report.repaired = true
            }
            return report
        }
        var damaged: [StoredEntry] = []
        var lastID = Int64.min
        while true {
            let batch = try entryBatch(after: lastID)
            guard let last = batch.last else { break }
            lastID = last.entry.id
            for (key, entry) in batch {
                report.entriesChecked += 1
                report.bytesChecked += entry.size
                if let reason = damage(of: entry) {
                    report.damagedEntries.append((key, reason))
                    damaged.append(entry)
                }
            }
        }
        let orphans = try reclaimOrphans(dryRun: !repair)
        report.orphanFiles = orphans.count
        report.orphanBytes = orphans.bytes
        report.totalsMismatch = try wrapIndexErrors {
            try index.readOrWrite(writing: repair) { db in
                let actual =
                    try db.first(
                        "SELECT COALESCE(SUM(size), 0), COUNT(*), COALESCE(SUM(pinned * size), 0), COALESCE(SUM(pinned), 0) FROM states"
                    ) { [$0.int(0), $0.int(1), $0.int(2), $0.int(3)] } ?? []
                let stored = try db.first("SELECT size, count, pinned_size, pinned_count FROM totals WHERE id = 1") {
                    [$0.int(0), $0.int(1), $0.int(2), $0.int(3)]
                }
                let main = try db.first("SELECT main_size, main_count FROM totals WHERE id = 1") {
                    [$0.int(0), $0.int(1)]
                }
                let actualMain = try db.first(
                    "SELECT COALESCE(SUM(size), 0), COUNT(*) FROM states WHERE queue = 1 AND pinned = 0"
                ) { [$0.int(0), $0.int(1)] }
                if repair {
                    for entry in damaged {
                        if let file = try db.first(
                            "DELETE FROM entries WHERE id = ?1 AND file IS ?2 RETURNING file",
                            [.integer(entry.id), .optionalText(entry.file)], map: { $0.text(0) }), let file
                        {
                            removeValueFile(file)  // an orphan at worst
                        }
                    }
                }
                let mismatch = actual != stored || main != actualMain
                if repair && (mismatch || !damaged.isEmpty) {
                    try db.execute(
                        """
                        UPDATE totals SET (size, count, pinned_size, pinned_count) =
                            (SELECT COALESCE(SUM(size), 0), COUNT(*), COALESCE(SUM(pinned * size), 0),
                                    COALESCE(SUM(pinned), 0) FROM states) WHERE id = 1;
                        UPDATE totals SET (main_size, main_count) = (SELECT COALESCE(SUM(size), 0), COUNT(*)
                            FROM states WHERE queue = 1 AND pinned = 0) WHERE id = 1;
                        UPDATE totals SET ghosts = (SELECT COUNT(*) FROM ghosts) WHERE id = 1;
                        """)
                }
                return mismatch
            }
        }
        report.repaired = repair && !report.isHealthy
        return report
    }

    private func entryBatch(after lastID: Int64) throws -> [(key: String, entry: StoredEntry)] {
        try wrapIndexErrors {
            try index.read { db in
                var batch: [(String, StoredEntry)] = []
                try db.query(
                    """
                    SELECT id, size, file, checksum, expires, pinned, data, key
                    FROM entries WHERE id > ?1 ORDER BY id LIMIT 256
                    """, [.integer(lastID)]
                ) { row in
                    let entry = StoredEntry(
                        id: row.int64(0), size: row.int(1), file: row.text(2),
                        checksum: UInt64(bitPattern: row.int64(3)),
                        expires: row.optionalDouble(4), isPinned: row.int(5) != 0,
                        inline: row.isNull(2) ? (row.blob(6) ?? Data()) : nil)
                    batch.append((String(decoding: row.blob(7) ?? Data(), as: UTF8.self), entry))
                }
                return batch
            }
        }
    }

    /// Why an entry's bytes are damaged, or `nil` when they are intact.
    private func damage(of entry: StoredEntry) -> String? {
        if let inline = entry.inline {
            if inline.count != entry.size { return "inline value has \(inline.count) bytes, expected \(entry.size)" }
            return Checksum.of(inline) == entry.checksum ? nil : "inline value fails its checksum"
        }
        guard let file = entry.file else { return "entry has neither inline bytes nor a file" }
        let path = path(forFile: file)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "value file \(file) cannot be opened (\(POSIXFile.error("open")))" }
        defer { Foundation.close(fd) }
        var hasher = Checksum()
        var length = 0
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer.baseAddress!, chunk)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return "value file \(file) cannot be read (\(POSIXFile.error("read")))" }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            length += n
        }
        if length != entry.size { return "value file \(file) has \(length) bytes, expected \(entry.size)" }
        return hasher.finalize() == entry.checksum ? nil : "value file \(file) fails its checksum"
    }

    /// Removes files that no entry refers to: temporary files whose writer has finished or
    /// died, and value files without a row (left by a crash between rename and commit).
    ///
    /// Runs in the background after opening; call it directly to reclaim space now.
    ///
    /// - Returns: The number of files removed and their bytes.
    /// - Throws: ``StashError`` when the index cannot be read.
    /// - Complexity: O(*F* log *N*) for *F* files in the directory.
    @discardableResult
    public func reclaimOrphans() throws -> (count: Int, bytes: Int) {
        let result = try reclaimOrphans(dryRun: false)
        if result.count > 0 { configuration.onEvent?(.reclaimedOrphans(count: result.count, bytes: result.bytes)) }
        return result
    }

    private func reclaimOrphans(dryRun: Bool) throws -> (count: Int, bytes: Int) {
        var count = 0
        var bytes = 0
        func discard(_ path: String) {
            bytes += POSIXFile.size(path)?.logical ?? 0
            count += 1
            if !dryRun { try? POSIXFile.remove(path) }  // a file that cannot be removed stays an orphan
        }
        let temporary = root + "/tmp"
        for name in POSIXFile.contents(of: temporary) {
            if let size = POSIXFile.removeIfAbandoned(temporary + "/" + name, dryRun: dryRun) {
                count += 1
                bytes += size
            }
        }
        var pending: [String] = []
        func checkPending() throws {
            guard !pending.isEmpty else { return }
            // Checked under the write lock: a publisher renames its file while holding it, so a
            // listed file without a row at this point can never gain one.
            let orphans = try wrapIndexErrors {
                try index.readOrWrite(writing: !dryRun) { db in
                    // While a rebuild (in any process) is under way, files without rows are
                    // about to gain them.
                    if access(root + "/" + IndexRecovery.markerName, F_OK) == 0 { return [String]() }
                    return try pending.filter { name in
                        // A sidecar (or its leftover temporary file) lives as long as its value's row.
                        let valueName = name.components(separatedBy: ValueSidecar.suffix)[0]
                        return try db.first("SELECT 1 FROM entries WHERE file = ?1", [.text(valueName)]) { _ in true }
                            == nil
                    }
                }
            }
            for name in orphans { discard(path(forFile: name)) }
            pending.removeAll()
        }
        let data = root + "/data"
        for first in POSIXFile.contents(of: data) {
            for second in POSIXFile.contents(of: "\(data)/\(first)") {
                for name in POSIXFile.contents(of: "\(data)/\(first)/\(second)") {
                    pending.append("\(first)/\(second)/\(name)")
                    if pending.count >= 256 { try checkPending() }
                }
            }
        }
        try checkPending()
        return (count, bytes)
    }

    /// The bytes the cache really occupies on disk: the index files plus every value file,
    /// rounded to file-system blocks.
    ///
    /// - Complexity: O(*F*) for *F* files in the directory.
    public func diskUsage() -> ByteCount {
        commitStagedNow()
        var total = 0
        for suffix in ["", "-wal", "-shm"] { total += POSIXFile.size(index.databasePath + suffix)?.allocated ?? 0 }
        let data = root + "/data"
        for first in POSIXFile.contents(of: data) {
            for second in POSIXFile.contents(of: "\(data)/\(first)") {
                let directory = "\(data)/\(first)/\(second)"
                for name in POSIXFile.contents(of: directory) {
                    total += POSIXFile.size("\(directory)/\(name)")?.allocated ?? 0
                }
            }
        }
        return ByteCount(total)
    }
}
