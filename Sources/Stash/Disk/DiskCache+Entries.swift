import Foundation

extension DiskCache {
    /// Removes the entry under `key`, if any.
    ///
    /// - Throws: ``StashError`` for an empty key or when the index cannot be written.
    /// - Complexity: O(log *N*).
    public func removeData(forKey key: String) throws {
        try Self.validate(key: key)
        if writesBehind {
            try stage(.remove, forKey: key)
            return
        }
        let keyBytes = Self.utf8(key)
        let file = try wrapIndexErrors { try index.write { db in try removeRow(forKey: keyBytes, in: db) } }
        accessLog.withLock { $0.forget(keyBytes) }
        if let file = file ?? nil {
            removeValueFile(file)  // a leftover file is reclaimed as an orphan
        }
    }

    /// Deletes the row of `keyBytes` inside the caller's write transaction; returns its file
    /// (`.some(nil)` for an inline value), or `nil` when there was no row.
    func removeRow(forKey keyBytes: Data, in db: SQLiteConnection) throws -> String?? {
        let homeID = Self.entryID(forKey: keyBytes)
        // At the key's own id, or (only while displaced entries exist) through their keys.
        // The file is read first rather than returned by the DELETE: SQLite runs
        // `RETURNING` through a temporary table, which cost more than this lookup.
        let atHome = try db.first(
            "SELECT file FROM entries WHERE id = ?1 AND key = ?2", [.integer(homeID), .blob(keyBytes)],
            map: { $0.text(0) })
        if atHome != nil {
            try db.run("DELETE FROM entries WHERE id = ?1", [.integer(homeID)])
            return atHome
        }
        guard try Self.hasDisplacedEntries(db) else { return nil }
        return try db.first(
            "DELETE FROM entries WHERE key = ?1 AND displaced = 1 RETURNING file", [.blob(keyBytes)],
            map: { $0.text(0) })
    }

    /// Removes every entry, pinned ones included.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*N*).
    public func removeAll() throws {
        try flush()
        writeBehindHooks.withLock { $0.removeAllWillDelete }?()
        let files = try wrapIndexErrors {
            try index.write { db in
                var files: [String] = []
                try db.query("SELECT file FROM entries WHERE file IS NOT NULL") { files.append($0.text(0)!) }
                try db.execute(
                    """
                    DELETE FROM entries; DELETE FROM ghosts; DELETE FROM sketch;
                    UPDATE totals SET size = 0, count = 0, pinned_size = 0, pinned_count = 0, main_size = 0,
                        main_count = 0, hand = 0, ghosts = 0, displaced = 0
                    WHERE id = 1;
                    """)
                return files
            }
        }
        accessLog.withLock { _ = $0.drain(at: Date()) }
        discardSketch()
        for file in files {
            removeValueFile(file)  // a leftover file is reclaimed as an orphan
        }
    }

    /// Pins the entry under `key`: it is never evicted or expired until unpinned.
    ///
    /// Pinned entries are the cache's durable "store" mode, for data the user created. They
    /// count in ``pinnedSize`` and ``pinnedCount`` instead of against the limits.
    ///
    /// - Returns: `false` when there is no entry under `key`.
    /// - Throws: ``StashError`` for an empty key or when the index cannot be written.
    /// - Complexity: O(log *N*).
    @discardableResult
    public func pin(_ key: String) throws -> Bool {
        try setPinned(true, key: key)
    }

    /// Unpins the entry under `key`, making it evictable again (and evicting if the cache is
    /// now over a limit).
    ///
    /// - Returns: `false` when there is no entry under `key`.
    /// - Throws: ``StashError`` for an empty key or when the index cannot be written.
    /// - Complexity: O(log *N*), plus eviction.
    @discardableResult
    public func unpin(_ key: String) throws -> Bool {
        try setPinned(false, key: key)
    }

    private func setPinned(_ pinned: Bool, key: String) throws -> Bool {
        try Self.validate(key: key)
        try flush()
        let now = configuration.clock()
        let (found, victims) = try wrapIndexErrors {
            try index.write { db -> (Bool, [Victim]) in
                let id = try Self.storedID(forKey: Self.utf8(key), in: db)
                if let id {
                    try db.run(
                        "UPDATE OR FAIL entries SET pinned = ?1 WHERE id = ?2", [.int(pinned ? 1 : 0), .integer(id)])
                }
                if let id {
                    if pinned { try moveInlineValueToFile(entry: id, key: key, in: db) }
                    try writeSidecar(forEntry: id, in: db)
                }
                guard let id, !pinned else { return (id != nil, []) }
                return (true, try evictIfNeeded(in: db, protecting: id, now: now))
            }
        }
        finishEviction(victims)
        return found
    }

    /// Replaces the metadata and time-to-live of an existing entry without touching its bytes,
    /// as a loader does after an HTTP 304.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - key: The entry's key.
    ///   - timeToLive: The new time-to-live from now; `nil` uses ``Configuration/defaultTimeToLive``.
    /// - Returns: `false` when there is no entry under `key`.
    /// - Throws: ``StashError`` for an empty key or when the index cannot be written.
    /// - Complexity: O(log *N*).
    @discardableResult
    public func updateMetadata(_ metadata: Metadata, forKey key: String, timeToLive: Duration? = nil) throws -> Bool {
        try Self.validate(key: key)
        try flush()
        let now = configuration.clock()
        let ttl = timeToLive ?? configuration.defaultTimeToLive
        let expires = ttl.map { now.addingTimeInterval($0.seconds).timeIntervalSince1970 }
        return try wrapIndexErrors {
            try index.write { db in
                guard let id = try Self.storedID(forKey: Self.utf8(key), in: db) else { return false }
                try db.run(
                    """
                    UPDATE entries SET content_type = ?1, etag = ?2, last_modified = ?3, extra = ?4, expires = ?5
                    WHERE id = ?6
                    """,
                    [
                        .optionalText(metadata.contentType), .optionalText(metadata.etag),
                        .optionalText(metadata.lastModified), .optionalText(Self.encodeExtra(metadata.extra)),
                        .optionalReal(expires), .integer(id),
                    ])
                try db.run(
                    "UPDATE states SET accessed = ?1 WHERE seq = (SELECT seq FROM entries WHERE id = ?2)",
                    [.real(now.timeIntervalSince1970), .integer(id)])
                try writeSidecar(forEntry: id, in: db)
                return true
            }
        }
    }

    /// Every key in the cache, in the order their values were stored (a replaced value counts
    /// from its replacement).
    ///
    /// - Throws: ``StashError`` when the index cannot be read.
    /// - Complexity: O(*N*). For large caches prefer ``entries(batchSize:)``.
    public var allKeys: [String] {
        get throws {
            try flush()
            return try wrapIndexErrors {
                try index.read { db in
                    var keys: [String] = []
                    try db.query(
                        "SELECT e.key FROM entries e JOIN states s ON s.seq = e.seq ORDER BY e.created, s.rank"
                    ) { row in
                        keys.append(String(decoding: row.blob(0) ?? Data(), as: UTF8.self))
                    }
                    return keys
                }
            }
        }
    }

    /// An asynchronous sequence of every entry's attributes, in no particular order (that of
    /// the ids the index derives from the keys), read from the index in batches so that memory
    /// stays bounded however large the cache is.
    ///
    /// Each batch starts after the last id of the one before (one lookup), so entries stored
    /// or removed meanwhile are seen or not, but none is seen twice. Sort the attributes
    /// yourself for an order (as `stash list` does).
    ///
    /// - Complexity: O(*N*) over the whole iteration.
    public func entries(batchSize: Int = 512) -> AsyncThrowingStream<Attributes, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Attributes, any Error>.makeStream()
        let task = Task.detached { [self] in
            var lastID = Int64.min
            do {
                try flush()
                while !Task.isCancelled {
                    let batch = try readEntries(after: lastID, limit: max(1, batchSize))
                    if batch.isEmpty { break }
                    for (id, attributes) in batch {
                        continuation.yield(attributes)
                        lastID = id
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func readEntries(after lastID: Int64, limit: Int) throws -> [(Int64, Attributes)] {
        try wrapIndexErrors {
            try index.read { db in
                var batch: [(Int64, Attributes)] = []
                try db.query(
                    """
                    SELECT e.id, e.key, e.size, e.created, s.accessed, e.expires, e.pinned, e.file, e.content_type,
                        e.etag, e.last_modified, e.extra
                    FROM entries e JOIN states s ON s.seq = e.seq WHERE e.id > ?1 ORDER BY e.id LIMIT ?2
                    """, [.integer(lastID), .int(limit)]
                ) { row in
                    let keyBytes = row.blob(1) ?? Data()
                    let attributes = Attributes(
                        key: String(decoding: keyBytes, as: UTF8.self), size: row.int(2),
                        created: Date(timeIntervalSince1970: row.double(3)),
                        lastAccess: Date(timeIntervalSince1970: row.double(4)),
                        expires: row.optionalDouble(5).map(Date.init(timeIntervalSince1970:)),
                        isPinned: row.int(6) != 0,
                        isInline: row.isNull(7),
                        metadata: Metadata(
                            contentType: row.text(8), etag: row.text(9), lastModified: row.text(10),
                            extra: Self.decodeExtra(row.text(11))))
                    batch.append((row.int64(0), attributes))
                }
                return batch
            }
        }
    }

    // MARK: - Totals

    private func totals() throws -> (size: Int, count: Int, pinnedSize: Int, pinnedCount: Int) {
        // Staged changes count at once: the totals are read after committing them.
        try flush()
        return try wrapIndexErrors {
            try index.read { db in
                try db.first("SELECT size, count, pinned_size, pinned_count FROM totals WHERE id = 1") {
                    ($0.int(0), $0.int(1), $0.int(2), $0.int(3))
                }
            } ?? (0, 0, 0, 0)
        }
    }

    /// Bytes of all values, pinned ones included (see ``Configuration/sizeLimit`` for what counts).
    ///
    /// Staged changes count: the totals are read after committing them (as `flush()`).
    ///
    /// - Complexity: O(1): the total is kept in the index (plus the commit of staged changes).
    public var totalSize: ByteCount {
        get throws { ByteCount(try totals().size) }
    }

    /// Number of entries, pinned ones included.
    ///
    /// - Complexity: O(1).
    public var totalCount: Int {
        get throws { try totals().count }
    }

    /// Bytes of pinned values, which do not count against ``Configuration/sizeLimit``.
    ///
    /// - Complexity: O(1).
    public var pinnedSize: ByteCount {
        get throws { ByteCount(try totals().pinnedSize) }
    }

    /// Number of pinned entries, which do not count against ``Configuration/countLimit``.
    ///
    /// - Complexity: O(1).
    public var pinnedCount: Int {
        get throws { try totals().pinnedCount }
    }

    /// Counters since this object was created.
    public var statistics: Statistics {
        var statistics = counters.withLock { $0 }
        staging.withLock { staging in
            statistics.stagedBytes = staging.bytes
            statistics.peakStagedBytes = staging.peakBytes
            statistics.peakStagedMemoryBytes = staging.peakMemoryBytes
        }
        return statistics
    }
}
