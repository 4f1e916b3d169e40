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
        func existing(_ row: SQLiteRow) -> Existing {
            Existing(
                id: row.int64(1), file: row.text(2), pinned: row.int(3) != 0,
                state: PolicyState(queue: row.int(4), rank: row.int64(5), frequency: row.int(6)),
                seq: row.int64(7), isDisplaced: row.int(8) != 0)
        }
        // The row at the key's own id holds this key's entry, another key's (a
        // collision), or nothing. Otherwise the entry may be a displaced one: its id
        // was taken when it was stored (and may have been freed since).
        // One statement reads the home row (if any) and whether displaced entries exist.
        let homeID = Self.entryID(forKey: keyBytes)
        let (atHome, hasDisplaced) =
            try db.first(
                """
                SELECT e.key = ?2, e.id, e.file, e.pinned, s.queue, s.rank, s.frequency, e.seq, e.displaced,
                    t.displaced != 0
                FROM totals t LEFT JOIN entries e ON e.id = ?1 LEFT JOIN states s ON s.seq = e.seq WHERE t.id = 1
                """,
                [.integer(homeID), .blob(keyBytes)]
            ) { row in
                (row.isNull(1) ? nil : (isKeys: row.int(0) != 0, entry: existing(row)), row.int(9) != 0)
            } ?? (nil, true)
        var old = atHome?.isKeys == true ? atHome?.entry : nil
        if old == nil, hasDisplaced {
            old = try db.first(
                """
                SELECT 1, e.id, e.file, e.pinned, s.queue, s.rank, s.frequency, e.seq, e.displaced
                FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1 AND e.displaced = 1
                """,
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
        var inline: Data?
        if fileName == nil, case .inline(let data) = source { inline = data }
        // A replaced value is a new row at the end of the table, under the old one's id: a batch
        // of stores appends to a few pages, where rewriting the old row would dirty a random
        // page per store. The old row is deleted first (not REPLACEd, which would skip the
        // totals' delete trigger), and its id is free again for the new one.
        if let old {
            try db.run("DELETE FROM entries WHERE seq = ?1", [.integer(old.seq)])
        }
        // Another key holds this one's id: the entry takes a free one, and reads find it
        // through the index of displaced keys.
        let isDisplaced = old?.isDisplaced ?? (atHome != nil)
        let id = try old?.id ?? (isDisplaced ? Self.freeDisplacedID(in: db) : homeID)
        try db.run(
            """
            INSERT INTO entries (key, size, file, checksum, created, expires, pinned, content_type, etag,
                                 last_modified, extra, id, displaced, data)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """,
            [
                .blob(keyBytes), .int(size), .optionalText(fileName), .integer(Int64(bitPattern: checksum)),
                .real(now.timeIntervalSince1970), .optionalReal(expires), .int(isPinned ? 1 : 0),
                .optionalText(metadata.contentType), .optionalText(metadata.etag),
                .optionalText(metadata.lastModified), .optionalText(Self.encodeExtra(metadata.extra)),
                .integer(id), .int(isDisplaced ? 1 : 0), inline.map { .blob($0) } ?? .null,
            ])
        try Self.insertState(
            ofRow: db.lastInsertRowID, size: size, pinned: isPinned, state: state,
            accessed: now.timeIntervalSince1970, in: db)
        if isDisplaced && old == nil { try db.run("UPDATE totals SET displaced = displaced + 1 WHERE id = 1") }
        if fileName != nil {
            try writeSidecar(forEntry: id, in: db, isNewFile: true)
        }
        let victims = try evictIfNeeded(in: db, protecting: id, now: now, mayEvictProtected: mayBeTurnedAway)
        if policy.usesFrequencySketch { try saveSketch(in: db, force: false) }
        return (old?.file, victims)
    }

    /// An entry's row as a store finds it before replacing it.
    struct Existing {
        var id: Int64
        var file: String?
        var pinned: Bool
        var state: PolicyState
        /// The row's number, which the replacement's row does not keep.
        var seq: Int64
        var isDisplaced: Bool
    }

    /// Writes the policy state of the entry just inserted as row `seq` of `entries`.
    ///
    /// The totals follow from it (`states_inserted`). Call it inside the write transaction,
    /// right after the entry's insert.
    static func insertState(
        ofRow seq: Int64, size: Int, pinned: Bool, state: PolicyState, accessed: Double, in db: SQLiteConnection
    ) throws {
        try db.run(
            "INSERT OR FAIL INTO states (seq, size, pinned, queue, rank, frequency, accessed) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            [
                .integer(seq), .int(size), .int(pinned ? 1 : 0), .int(state.queue), .integer(state.rank),
                .int(state.frequency), .real(accessed),
            ])
    }

    /// An id for a displaced entry that no entry has and no key's id can equal: `-1 - seq` of
    /// the row about to be appended.
    ///
    /// Key ids are never negative, and an entry keeps its id while its row moves to the end
    /// (a replacement), so every displaced id in use is `-1 - seq` of a row at or before the
    /// last one. Call it inside the write transaction, just before the insert.
    static func freeDisplacedID(in db: SQLiteConnection) throws -> Int64 {
        try db.first("SELECT -2 - COALESCE(max(seq), 0) FROM entries") { $0.int64(0) } ?? -2
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

    /// The `extra` metadata as JSON text (``ExtraJSON``), `nil` when there is none.
    static func encodeExtra(_ extra: [String: String]) -> String? {
        extra.isEmpty ? nil : ExtraJSON.text(extra)
    }

    /// The `extra` metadata that ``encodeExtra(_:)`` wrote: read by ``ExtraJSON`` (a disk hit
    /// reads it once per hit, and `JSONDecoder` cost more than the rest of the lookup), with
    /// `JSONDecoder` for any text that is not a plain object of strings.
    package static func decodeExtra(_ text: String?) -> [String: String] {
        guard let text else { return [:] }
        if let decoded = ExtraJSON.objectOfStrings(text) { return decoded }
        guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) else {
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
