import Foundation

extension DiskCache {
    /// One row of the index as a read sees it.
    struct StoredEntry {
        var id: Int64
        var size: Int
        var file: String?
        var checksum: UInt64
        var expires: Double?
        var isPinned: Bool
        var inline: Data?
    }

    /// The value stored under `key`, or `nil` when there is none or it has expired.
    ///
    /// Never returns partial bytes: a value whose file is missing or has the wrong length (or,
    /// with ``Configuration/verifiesChecksums``, the wrong checksum) is a miss, and its entry
    /// is dropped.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key,
    ///   ``StashError/Code/corrupt`` when the index is damaged, ``StashError/Code/io`` when a
    ///   file cannot be read.
    /// - Complexity: O(log *N*) index lookup plus O(*n*) in the value's length.
    public func data(forKey key: String) throws -> Data? {
        try Self.validate(key: key)
        // A concurrent overwrite may delete the file between our lookup and our open: look again.
        for _ in 0..<3 {
            switch try readStaged(key) {
            case .notStaged: break
            case .moved: continue
            case .absent:
                counters.withLock { $0.misses += 1 }
                return nil
            case .value(let bytes):
                recordAccess(Self.utf8(key), at: configuration.clock())
                counters.withLock { stats in
                    stats.hits += 1
                    stats.bytesRead += bytes.count
                }
                return bytes
            }
            guard let entry = try lookUp(key), try !isExpired(entry, key: key) else {
                counters.withLock { $0.misses += 1 }
                return nil
            }
            let bytes: Data
            if let inline = entry.inline {
                guard inline.count == entry.size else {
                    try dropDamaged(
                        entry, key: key, reason: "inline value has \(inline.count) bytes, expected \(entry.size)")
                    return nil
                }
                bytes = inline
            } else if let file = entry.file {
                let result: POSIXFile.ReadResult
                do {
                    result = try POSIXFile.read(path(forFile: file), expectedSize: entry.size)
                } catch {
                    throw readError(error, "Cannot read the value for '\(key)' from \(path(forFile: file))")
                }
                switch result {
                case .bytes(let data):
                    bytes = data
                case .missing:
                    if try lookUp(key)?.file != file { continue }
                    try dropDamaged(entry, key: key, reason: "value file \(file) is missing")
                    return nil
                case .wrongSize(let actual):
                    if try lookUp(key)?.file != file { continue }
                    try dropDamaged(
                        entry, key: key, reason: "value file \(file) has \(actual) bytes, expected \(entry.size)")
                    return nil
                }
            } else {
                try dropDamaged(entry, key: key, reason: "entry has neither inline bytes nor a file")
                return nil
            }
            if configuration.verifiesChecksums && Checksum.of(bytes) != entry.checksum {
                try dropDamaged(entry, key: key, reason: "checksum mismatch")
                return nil
            }
            recordAccess(Self.utf8(key), at: configuration.clock())
            counters.withLock { stats in
                stats.hits += 1
                stats.bytesRead += bytes.count
            }
            return bytes
        }
        counters.withLock { $0.misses += 1 }
        return nil
    }

    /// Whether a live (present and unexpired) value is stored under `key`.
    ///
    /// Does not count as an access for eviction, and does not open the value's file.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key, or when the
    ///   index cannot be read.
    /// - Complexity: O(log *N*).
    public func containsData(forKey key: String) throws -> Bool {
        try Self.validate(key: key)
        let now = configuration.clock().timeIntervalSince1970
        if let staged = stagedChange(forKey: key) {
            guard case .store(let value) = staged.change else { return false }
            return value.isLive(at: now)
        }
        return try wrapIndexErrors {
            try index.read { db in
                func isLive(_ row: SQLiteRow) -> Bool {
                    row.int(2) != 0 || row.optionalDouble(1).map { $0 > now } ?? true
                }
                var key = key
                let direct = try key.withUTF8 { keyBytes in
                    try db.first(
                        "SELECT key, expires, pinned FROM entries WHERE id = ?1",
                        bindingInteger: Self.entryID(forKey: UnsafeRawBufferPointer(keyBytes))
                    ) { row in row.blob(0, equals: keyBytes) ? isLive(row) : nil }
                }
                if let direct, let live = direct { return live }
                guard try Self.hasDisplacedEntries(db) else { return false }
                return try db.first(
                    "SELECT key, expires, pinned FROM entries WHERE key = ?1 AND displaced = 1", bindingKey: key,
                    map: isLive) ?? false
            }
        }
    }

    /// What the cache knows about the entry under `key`, or `nil` when there is none.
    ///
    /// Does not count as an access. Expired entries are reported (with ``Attributes/expires``
    /// in the past) so that a loader can revalidate them.
    ///
    /// - Throws: ``StashError`` for an empty key or when the index cannot be read.
    /// - Complexity: O(log *N*).
    public func attributes(forKey key: String) throws -> Attributes? {
        try attributes(forKey: key, waitingForEviction: true)
    }

    /// ``attributes(forKey:)``, where `waitingForEviction: false` answers at once while a staged
    /// store that takes the cache over its limit waits for its commit: the answer may then be an
    /// entry that the commit evicts, as ``entry(forKey:decodingExtra:waitingForEviction:)``'s may
    /// (the cache keeps the same entries either way: this read records no access).
    package func attributes(forKey key: String, waitingForEviction: Bool) throws -> Attributes? {
        try Self.validate(key: key)
        if let staged = stagedChange(forKey: key, waitingForEviction: waitingForEviction) {
            guard case .store(let value) = staged.change else { return nil }
            return try stagedAttributes(value, forKey: key)
        }
        let keyBytes = Self.utf8(key)
        let pendingAccess = accessLog.withLock { $0.lastAccess(of: keyBytes) }
        return try wrapIndexErrors {
            try index.read { db in
                guard let id = try Self.storedID(forKey: keyBytes, in: db) else { return nil }
                return try db.first(
                    """
                    SELECT e.size, e.created, s.accessed, e.expires, e.pinned, e.file, e.content_type, e.etag,
                        e.last_modified, e.extra
                    FROM entries e JOIN states s ON s.seq = e.seq WHERE e.id = ?1
                    """, [.integer(id)]
                ) { row in
                    let accessed = Date(timeIntervalSince1970: row.double(2))
                    return Attributes(
                        key: key, size: row.int(0), created: Date(timeIntervalSince1970: row.double(1)),
                        lastAccess: max(accessed, pendingAccess ?? accessed),
                        expires: row.optionalDouble(3).map(Date.init(timeIntervalSince1970:)),
                        isPinned: row.int(4) != 0, isInline: row.isNull(5),
                        metadata: Metadata(
                            contentType: row.text(6), etag: row.text(7), lastModified: row.text(8),
                            extra: Self.decodeExtra(row.text(9))))
                }
            }
        }
    }

    /// The attributes of a staged value; a store that keeps the pinned state (`pinned: nil`)
    /// takes it from the committed entry.
    func stagedAttributes(_ value: StagingArea.StagedValue, forKey key: String) throws -> Attributes {
        let isPinned: Bool
        if let pinned = value.pinned {
            isPinned = pinned
        } else {
            isPinned = try lookUp(key)?.isPinned ?? false
        }
        var isInline = !isPinned
        if case .file = value.source { isInline = false }
        return Attributes(
            key: key, size: value.size, created: value.created, lastAccess: value.created,
            expires: value.expires.map(Date.init(timeIntervalSince1970:)), isPinned: isPinned, isInline: isInline,
            metadata: value.metadata)
    }

    func lookUp(_ keyBytes: Data) throws -> StoredEntry? {
        try lookUp(String(decoding: keyBytes, as: UTF8.self))
    }

    /// One indexed read: the entry stored under the key's id, with the bytes of an inline value.
    ///
    /// Only when that id holds another key (a hash collision, or an entry written before ids
    /// came from keys) or nothing, a second read goes through the key index.
    func lookUp(_ key: String) throws -> StoredEntry? {
        try wrapIndexErrors {
            try index.read { db in
                var key = key
                let direct = try key.withUTF8 { keyBytes in
                    try db.first(
                        "SELECT key, id, size, file, checksum, expires, pinned, data FROM entries WHERE id = ?1",
                        bindingInteger: Self.entryID(forKey: UnsafeRawBufferPointer(keyBytes))
                    ) { row in row.blob(0, equals: keyBytes) ? Self.storedEntry(row) : nil }
                }
                if let direct, let entry = direct { return entry }
                guard try Self.hasDisplacedEntries(db) else { return nil }
                return try db.first(
                    """
                    SELECT key, id, size, file, checksum, expires, pinned, data FROM entries
                    WHERE key = ?1 AND displaced = 1
                    """, bindingKey: key, map: Self.storedEntry)
            }
        }
    }

    /// Whether some entry is stored under an id other than its key's (a collision, or an
    /// entry from schema 1): only then must a miss by id be confirmed through the key index.
    static func hasDisplacedEntries(_ db: SQLiteConnection) throws -> Bool {
        try db.first("SELECT displaced FROM totals WHERE id = 1") { $0.int(0) != 0 } ?? true
    }

    /// The id of the entry stored under `keyBytes`, or `nil` if there is none: its key's own id
    /// when that row holds the key, otherwise a displaced entry's, found through the index of
    /// displaced keys (only while the index has any).
    static func storedID(forKey keyBytes: Data, in db: SQLiteConnection) throws -> Int64? {
        let homeID = entryID(forKey: keyBytes)
        if try db.first(
            "SELECT 1 FROM entries WHERE id = ?1 AND key = ?2", [.integer(homeID), .blob(keyBytes)], map: { _ in true })
            != nil
        {
            return homeID
        }
        guard try hasDisplacedEntries(db) else { return nil }
        return try db.first(
            "SELECT id FROM entries WHERE key = ?1 AND displaced = 1", [.blob(keyBytes)], map: { $0.int64(0) })
    }

    /// The entry in a row of `SELECT key, id, size, file, checksum, expires, pinned, data` of
    /// `entries`.
    static func storedEntry(_ row: SQLiteRow) -> StoredEntry {
        StoredEntry(
            id: row.int64(1), size: row.int(2), file: row.text(3), checksum: UInt64(bitPattern: row.int64(4)),
            expires: row.optionalDouble(5), isPinned: row.int(6) != 0,
            inline: row.isNull(3) ? (row.blob(7) ?? Data()) : nil)
    }

    /// The id an entry for `key` is stored under when it is free.
    ///
    /// 63 bits of the key's XXH64, never negative, so that -1 can mean "no entry". Another key
    /// hashing to the same id gets a free id instead, and is found through the key index.
    static func entryID(forKey keyBytes: UnsafeRawBufferPointer) -> Int64 {
        Int64(bitPattern: Checksum.of(keyBytes) >> 1)
    }

    static func entryID(forKey keyBytes: Data) -> Int64 {
        keyBytes.withUnsafeBytes { entryID(forKey: $0) }
    }

    /// `true` for an expired, unpinned entry, which is then removed.
    func isExpired(_ entry: StoredEntry, key: String) throws -> Bool {
        guard !entry.isPinned, let expires = entry.expires else { return false }
        let now = configuration.clock()
        guard expires <= now.timeIntervalSince1970 else { return false }
        let removed = try removeRow(entry, onlyIfExpiredBefore: now.timeIntervalSince1970)
        if removed {
            finishEviction([Victim(key: key, size: entry.size, file: entry.file, reason: .expired)])
        }
        return true
    }

    /// Drops an entry whose bytes are damaged, if the row is still the one that was read.
    func dropDamaged(_ entry: StoredEntry, key: String, reason: String) throws {
        if try removeRow(entry, onlyIfExpiredBefore: nil), let file = entry.file {
            removeValueFile(file)  // a leftover file is reclaimed as an orphan
        }
        counters.withLock { stats in
            stats.misses += 1
            stats.damagedEntries += 1
        }
        configuration.onEvent?(.droppedDamagedEntry(key: key, reason: reason))
    }

    /// Deletes the row only if it still has the same id and file (a concurrent overwrite
    /// must not be undone).
    private func removeRow(_ entry: StoredEntry, onlyIfExpiredBefore deadline: Double?) throws -> Bool {
        if index.isReadOnly { return false }  // a read-only cache is not repaired by reads
        return try wrapIndexErrors {
            try index.write { db in
                try db.run(
                    """
                    DELETE FROM entries WHERE id = ?1 AND file IS ?2
                        AND (?3 IS NULL OR (pinned = 0 AND expires <= ?3))
                    """,
                    [.integer(entry.id), .optionalText(entry.file), .optionalReal(deadline)]) > 0
            }
        }
    }
}
