import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// An entry removed by eviction, trimming or expiry, whose file is deleted after commit.
    struct Victim {
        var key: String
        var size: Int
        var file: String?
        var reason: EvictionReason
    }

    /// A value on its way into the index, and what its failed transaction must undo.
    struct PendingPublish {
        var temporary: TemporaryFile?
        var fileName: String?
        var renamed = false
        /// Whether `temporary` is the caller's (staged) file rather than one written during
        /// the transaction.
        var isStaged = false

        init(_ source: ValueSource, in cache: DiskCache) {
            if case .file(let file) = source {
                temporary = file
                fileName = cache.newValueFileName()
                isStaged = true
            }
        }
    }

    /// Publishes a value: (rename the temporary file to its final random name), upsert the
    /// row and evict, all in one transaction; then remove replaced and evicted files.
    ///
    /// The rename happens while the write lock is held so that the orphan collector, which
    /// takes the same lock, never sees a published file without its row.
    func publish(
        _ source: ValueSource, size: Int, checksum: UInt64, forKey key: String, timeToLive: Duration?,
        pinned: Bool?, metadata: Metadata, mayBeTurnedAway: Bool = true
    ) throws {
        let now = configuration.clock()
        let expires: Double?
        do {
            expires = try Self.expiry(forKey: key, timeToLive: timeToLive ?? configuration.defaultTimeToLive, now: now)
        } catch {
            if case .file(let temporary) = source {
                discardTemporary(path: temporary.path, descriptor: temporary.descriptor)
            }
            throw error
        }
        var pending = PendingPublish(source, in: self)
        let outcome: (replaced: String?, victims: [Victim])
        do {
            outcome = try index.write { db in
                try flushAccesses(in: db)
                return try publishRow(
                    source, size: size, checksum: checksum, forKey: key, now: now, expires: expires, pinned: pinned,
                    metadata: metadata, mayBeTurnedAway: mayBeTurnedAway, pending: &pending, in: db)
            }
        } catch {
            discardFailedPublish(pending)
            throw index.indexError(error)
        }
        if let temporary = pending.temporary { Foundation.close(temporary.descriptor) }
        // After commit no reader can reach these files through the index any more. A failed
        // unlink leaves an orphan that the collector removes later.
        if let replaced = outcome.replaced { removeValueFile(replaced) }
        counters.withLock { stats in
            stats.writes += 1
            stats.bytesWritten += size
        }
        finishEviction(outcome.victims)
    }

    /// When an entry stored at `now` with `ttl` expires (seconds since 1970), or `nil`.
    ///
    /// - Throws: ``StashError/Code/invalidArgument`` for a time-to-live that is not positive.
    static func expiry(forKey key: String, timeToLive ttl: Duration?, now: Date) throws -> Double? {
        if let ttl, ttl <= .zero {
            throw StashError(.invalidArgument, "The time-to-live for '\(key)' must be positive, got \(ttl).")
        }
        return ttl.map { now.addingTimeInterval($0.seconds).timeIntervalSince1970 }
    }

    /// Removes the files of a publish whose transaction failed (never published, so no reader
    /// can see them).
    func discardFailedPublish(_ pending: PendingPublish) {
        guard let temporary = pending.temporary else { return }
        let leftover = pending.renamed ? path(forFile: pending.fileName!) : temporary.path
        discardTemporary(path: leftover, descriptor: temporary.descriptor)
        if pending.renamed { try? POSIXFile.remove(sidecarPath(forFile: pending.fileName!)) }  // else an orphan
    }

    /// Upserts the row of a value and evicts, inside the caller's write transaction; returns
    /// the replaced entry's file and the victims, whose files the caller removes after commit.
    func publishRow(
        _ source: ValueSource, size: Int, checksum: UInt64, forKey key: String, now: Date, expires: Double?,
        pinned: Bool?, metadata: Metadata, mayBeTurnedAway: Bool, pending: inout PendingPublish,
        in db: SQLiteConnection
    ) throws -> (replaced: String?, victims: [Victim]) {
        let keyBytes = Self.utf8(key)
        if let temporary = pending.temporary, let fileName = pending.fileName {
            try moveValueFile(temporary.path, to: fileName)
            pending.renamed = true
        }
        func existing(_ row: SQLiteRow) -> (id: Int64, file: String?, pinned: Bool, state: PolicyState) {
            (
                id: row.int64(1), file: row.text(2), pinned: row.int(3) != 0,
                state: PolicyState(queue: row.int(4), rank: row.int64(5), frequency: row.int(6))
            )
        }
        // The row at the key's own id holds this key's entry, another key's (a
        // collision), or nothing. Otherwise the entry may be a displaced one: its id
        // was taken when it was stored (and may have been freed since).
        // One statement reads the home row (if any) and whether displaced entries exist.
        let homeID = Self.entryID(forKey: keyBytes)
        let (atHome, hasDisplaced) =
            try db.first(
                """
                SELECT e.key = ?2, e.id, e.file, e.pinned, e.queue, e.rank, e.frequency, t.displaced != 0
                FROM totals t LEFT JOIN entries e ON e.id = ?1 WHERE t.id = 1
                """,
                [.integer(homeID), .blob(keyBytes)]
            ) { row in
                (row.isNull(1) ? nil : (isKeys: row.int(0) != 0, entry: existing(row)), row.int(7) != 0)
            } ?? (nil, true)
        var old = atHome?.isKeys == true ? atHome?.entry : nil
        if old == nil, hasDisplaced {
            old = try db.first(
                "SELECT 1, id, file, pinned, queue, rank, frequency FROM entries WHERE key = ?1 AND displaced = 1",
                [.blob(keyBytes)], map: existing)
        }
        let isPinned = pinned ?? old?.pinned ?? false
        if isPinned, case .inline(let data) = source {
            // Pinned values are user data: always a file with a sidecar, so that a
            // rebuilt index recovers them whatever their size.
            let file = try temporaryFile(holding: data, forKey: key)
            pending.temporary = file
            pending.isStaged = false
            let fileName = newValueFileName()
            pending.fileName = fileName
            try moveValueFile(file.path, to: fileName)
            pending.renamed = true
        }
        let fileName = pending.fileName
        let policy = configuration.evictionPolicy
        var policyIndex = SQLiteEvictionIndex(updatingStatesIn: db, cache: self)
        let state = try policy.insertionState(
            existing: old?.state, fingerprint: Self.fingerprint(keyBytes), in: &policyIndex)
        if policy.usesFrequencySketch { noteSketchRequests(1) }
        let columns: [SQLiteValue] = [
            .blob(keyBytes), .int(size), .optionalText(fileName), .integer(Int64(bitPattern: checksum)),
            .real(now.timeIntervalSince1970), .optionalReal(expires), .int(isPinned ? 1 : 0),
            .integer(state.rank), .optionalText(metadata.contentType), .optionalText(metadata.etag),
            .optionalText(metadata.lastModified), .optionalText(Self.encodeExtra(metadata.extra)),
            .int(state.queue), .int(state.frequency),
        ]
        let id: Int64
        if let old {
            id = old.id
            try db.run(
                """
                UPDATE entries SET size = ?2, file = ?3, checksum = ?4, created = ?5, accessed = ?5, expires = ?6,
                    pinned = ?7, rank = ?8, content_type = ?9, etag = ?10, last_modified = ?11, extra = ?12,
                    queue = ?13, frequency = ?14
                WHERE id = ?15
                """, columns + [.integer(id)])
        } else {
            // Another key holds this one's id: the entry takes a free one, and reads find
            // it through the index of displaced keys.
            // The new row's id comes from the connection, not from `RETURNING`, which SQLite
            // runs through a temporary table.
            let isDisplaced = atHome != nil
            try db.run(
                """
                INSERT INTO entries (key, size, file, checksum, created, accessed, expires, pinned, rank,
                                     content_type, etag, last_modified, extra, queue, frequency, id, displaced)
                VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                """, columns + [isDisplaced ? .null : .integer(homeID), .int(isDisplaced ? 1 : 0)])
            id = isDisplaced ? db.lastInsertRowID : homeID
            if isDisplaced { try db.run("UPDATE totals SET displaced = displaced + 1 WHERE id = 1") }
        }
        if fileName != nil {
            try writeSidecar(forEntry: id, in: db, isNewFile: true)
        }
        // The triggers wrote the item's other columns; an inline value's bytes go beside them.
        if fileName == nil, case .inline(let data) = source {
            try Self.setInlineBytes(data, ofItem: id, in: db)
        } else if old != nil {
            try Self.setInlineBytes(nil, ofItem: id, in: db)
        }
        let victims = try evictIfNeeded(in: db, protecting: id, now: now, mayEvictProtected: mayBeTurnedAway)
        if policy.usesFrequencySketch { try saveSketch(in: db, force: false) }
        return (old?.file, victims)
    }

    /// Keeps `data` as the inline bytes of the item `id`, or drops them (`nil`).
    ///
    /// The bytes are appended to `blobs` (SQLite numbers a new row past the largest id), and
    /// the trigger `items_blob_replaced` deletes the ones they replace. Call it inside the
    /// write transaction, after the entry's row is written.
    static func setInlineBytes(_ data: Data?, ofItem id: Int64, in db: SQLiteConnection) throws {
        guard let data else {
            try db.run("UPDATE items SET blob = NULL WHERE id = ?1", [.integer(id)])
            return
        }
        try db.run("INSERT INTO blobs (data) VALUES (?1)", [.blob(data)])
        try db.run("UPDATE items SET blob = ?2 WHERE id = ?1", [.integer(id), .integer(db.lastInsertRowID)])
    }

    /// Renames a temporary file to its final name under `data/`.
    ///
    /// Creates the fan-out directories on first use. Call it inside the write transaction.
    func moveValueFile(_ temporaryPath: String, to fileName: String) throws {
        let destination = path(forFile: fileName)
        do {
            do {
                try POSIXFile.rename(temporaryPath, destination)
            } catch  where error.errno == ENOENT {
                let directory = (destination as NSString).deletingLastPathComponent
                try POSIXFile.makeDirectory(directory, mode: 0o777)
                try POSIXFile.rename(temporaryPath, destination)
            }
            if configuration.durability == .durable {
                try POSIXFile.syncDirectory((destination as NSString).deletingLastPathComponent)
            }
        } catch {
            throw ioError(error, "Cannot publish a value file into \(root)/data")
        }
    }

    /// A new random name for a value file under `data/`, in a fan-out sized for the cache.
    ///
    /// The size is what the index held after this object's last commit, plus what is staged
    /// (``valueFileName(_:firstLevelDirectories:)``). Under ``WriteMode/immediate``, which keeps
    /// no such count, the full fan-out.
    func newValueFileName() -> String {
        guard writesBehind else { return Self.valueFileName(POSIXFile.randomName()) }
        let entries = staging.withLock { $0.committed.count + $0.queuedCount }
        return Self.valueFileName(POSIXFile.randomName(), firstLevelDirectories: min(16, 1 + entries / 4096))
    }

    /// Where a value file with the random `name` lives under `data/`: a two-level fan-out of
    /// up to 16 × 16 directories (`a/b/ab…`), of which the first `firstLevelDirectories` × 16
    /// are used.
    ///
    /// 256 leaf directories keep each one small enough for fast lookups up to millions of
    /// entries; a new cache starts with 16 and uses 16 more per 4096 entries, because creating
    /// a directory costs as much as creating the value's own file: 256 leaves made a new cache's
    /// first few hundred stores create half a directory each (and 256 × 256, almost one each).
    /// The row keeps the whole relative name, so a file stays where it was put as the fan-out
    /// grows.
    static func valueFileName(_ name: String, firstLevelDirectories: Int = 16) -> String {
        let first = name.first?.hexDigitValue ?? 0
        let directory = String(first % max(1, min(16, firstLevelDirectories)), radix: 16)
        return "\(directory)/\(name.dropFirst(1).prefix(1))/\(name)"
    }

    static func encodeExtra(_ extra: [String: String]) -> String? {
        guard !extra.isEmpty, let data = try? JSONEncoder().encode(extra) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeExtra(_ text: String?) -> [String: String] {
        guard let text, let decoded = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) else {
            return [:]
        }
        return decoded
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
