import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds a fresh index from the value files' descriptions (`ValueSidecar`), in O(files): one
/// directory walk, one `stat` and one small read per file, one transaction.
enum IndexBuilder {
    struct Result {
        var recovered = 0
        var lost = 0
        var record: DiskCache.IndexRebuild?
    }

    private struct Found {
        var file: String
        var sidecar: ValueSidecar
    }

    /// How often a progress event is sent while scanning.
    static let progressInterval = 1000

    static func build(
        at path: String, root: String, salvaging old: String?, onEvent: (@Sendable (DiskCache.Event) -> Void)?
    ) throws -> Result {
        var result = Result()
        var found: [Found] = []
        var scanned = 0
        let data = root + "/data"
        for first in POSIXFile.contents(of: data) {
            for second in POSIXFile.contents(of: "\(data)/\(first)") {
                let directory = "\(data)/\(first)/\(second)"
                let names = Set(POSIXFile.contents(of: directory))
                for name in names where !name.contains(ValueSidecar.suffix) {
                    scanned += 1
                    if scanned % progressInterval == 0 { onEvent?(.rebuildingIndex(filesScanned: scanned)) }
                    let file = "\(first)/\(second)/\(name)"
                    let valuePath = "\(directory)/\(name)"
                    guard
                        let sidecar = ValueSidecar.read(
                            describing: valuePath, hasFile: names.contains(name + ValueSidecar.suffix)),
                        sidecar.keyBytes != nil,
                        isRegularFile(valuePath, size: sidecar.size)
                    else {
                        result.lost += 1
                        continue
                    }
                    found.append(Found(file: file, sidecar: sidecar))
                }
            }
        }
        // Oldest first, so that ranks follow creation order and, for a key found twice (a
        // crash between publishing a replacement and removing the old file), the newest wins.
        found.sort { $0.sidecar.created < $1.sidecar.created }
        let db = try SQLiteConnection(path: path, busyTimeout: .seconds(5))
        defer { db.close() }
        try db.execute("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;")
        try db.execute(DiskIndex.schema)
        try db.execute("BEGIN IMMEDIATE")
        do {
            // `entries` has no unique key index (see `DiskIndex.schema`): each key gets one row
            // here, at its own id unless another key took it.
            var ids = Set<Int64>()
            var displaced = 0
            // Each entry's state goes beside it: ranks in the order of insertion, times from
            // the files (or the old index), nothing in the main queue yet.
            func insert(
                _ columns: [SQLiteValue], key keyBytes: Data, size: Int, pinned: Bool, rank: Int64, accessed: Double,
                _ sql: String
            ) throws -> Int64 {
                let homeID = DiskCache.entryID(forKey: keyBytes)
                let isDisplaced = ids.contains(homeID)
                let id = isDisplaced ? try DiskCache.freeDisplacedID(in: db) : homeID
                try db.run(sql, columns + [.integer(id), .int(isDisplaced ? 1 : 0)])
                try DiskCache.insertState(
                    ofRow: db.lastInsertRowID, size: size, pinned: pinned,
                    state: PolicyState(queue: 0, rank: rank, frequency: 0), accessed: accessed, in: db)
                ids.insert(id)
                if isDisplaced { displaced += 1 }
                return id
            }
            // For a key found twice (a crash between publishing a replacement and removing the
            // old file), the newest: the last in creation order.
            var newest: [Data: Int] = [:]
            for (position, entry) in found.enumerated() { newest[entry.sidecar.keyBytes!] = position }
            var rank: Int64 = 0
            for (position, entry) in found.enumerated() where newest[entry.sidecar.keyBytes!] == position {
                rank += 1
                let s = entry.sidecar
                _ = try insert(
                    [
                        .blob(s.keyBytes!), .int(s.size), .text(entry.file), .integer(Int64(bitPattern: s.checksum)),
                        .real(s.created), .optionalReal(s.expires), .int(s.pinned ? 1 : 0),
                        .optionalText(s.contentType), .optionalText(s.etag), .optionalText(s.lastModified),
                        .optionalText(s.extra),
                    ], key: s.keyBytes!, size: s.size, pinned: s.pinned, rank: rank, accessed: s.created,
                    """
                    INSERT INTO entries (key, size, file, checksum, created, expires, pinned, content_type, etag,
                                         last_modified, extra, id, displaced)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                    """)
            }
            if let old {
                let keys = Set(newest.keys)
                rank = try salvageInlineEntries(from: old, into: db, rank: rank) { row, keyBytes, rank in
                    guard !keys.contains(keyBytes) else { return nil }
                    // `row` is key, size, checksum, created, accessed, expires, content type,
                    // validators, extra and the bytes.
                    guard case .integer(let size) = row[1], case .real(let accessed) = row[4] else { return nil }
                    return try insert(
                        Array(row[0..<4]) + Array(row[5...]), key: keyBytes, size: Int(size), pinned: false,
                        rank: rank, accessed: accessed,
                        """
                        INSERT INTO entries (key, size, checksum, created, expires, content_type, etag,
                                             last_modified, extra, data, id, displaced)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                        """)
                }
            }
            try db.run("UPDATE totals SET clock = ?1 WHERE id = 1", [.integer(rank)])
            try db.run("UPDATE totals SET displaced = ?1 WHERE id = 1", [.int(displaced)])
            result.recovered = try db.first("SELECT count FROM totals WHERE id = 1") { $0.int(0) } ?? 0
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")  // the build error is the one to report
            throw error
        }
        // The file is renamed into place next; make its bytes durable first.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            defer { Foundation.close(fd) }
            try POSIXFile.sync(fd, path: path)
        }
        return result
    }

    /// Copies the inline, unpinned entries of the old index.
    ///
    /// Only when it can still be read and passes `quick_check`; anything else in it is
    /// skipped. File-backed entries already came from the
    /// files.
    private static func salvageInlineEntries(
        from old: String, into db: SQLiteConnection, rank: Int64,
        insert: (_ row: [SQLiteValue], _ key: Data, _ rank: Int64) throws -> Int64?
    ) throws -> Int64 {
        guard access(old, R_OK) == 0,
            let source = try? SQLiteConnection(path: old, busyTimeout: .seconds(1), createsFile: false)
        else { return rank }
        defer { source.close() }
        guard (try? source.first("PRAGMA quick_check") { $0.text(0) }) == .some("ok") else { return rank }
        var rank = rank
        var rows: [[SQLiteValue]] = []
        // Version 1 kept inline bytes in `inline`, versions 2 and 3 in `items`, 4 in `blobs`, 5 in
        // `entries`.
        func hasTable(_ name: String) -> Bool {
            (try? source.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", [.text(name)]) {
                _ in true
            }) == .some(true)
        }
        let bytes: DiskIndex.InlineBytes =
            if hasTable("blobs") {
                .version4
            } else if hasTable("items") {
                .version3
            } else if hasTable("inline") {
                .version1
            } else {
                .version5
            }
        let read: Void? = try? source.query(
            """
            SELECT e.key, e.size, e.checksum, e.created, \(bytes.accessed), e.expires, e.content_type, e.etag,
                   e.last_modified, e.extra, \(bytes.data)
            FROM entries e \(bytes.join)
            WHERE e.file IS NULL AND e.pinned = 0 ORDER BY \(bytes.rank)
            """
        ) { row in
            guard let data = row.blob(10), data.count == row.int(1) else { return }
            rows.append([
                .blob(row.blob(0) ?? Data()), .int(row.int(1)), .integer(row.int64(2)), .real(row.double(3)),
                .real(row.double(4)), .optionalReal(row.optionalDouble(5)), .optionalText(row.text(6)),
                .optionalText(row.text(7)), .optionalText(row.text(8)), .optionalText(row.text(9)), .blob(data),
            ])
        }
        guard read != nil else { return rank }
        var seen = Set<Data>()
        for row in rows {
            rank += 1
            // A key from the files, or one the old index held twice, keeps its first row.
            guard case .blob(let keyBytes) = row[0], seen.insert(keyBytes).inserted else { continue }
            _ = try insert(row, keyBytes, rank)
        }
        return rank
    }

    private static func isRegularFile(_ path: String, size: Int) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFREG && Int(info.st_size) == size
    }
}
