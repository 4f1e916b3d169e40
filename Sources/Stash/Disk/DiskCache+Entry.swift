import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// One entry as a single read of the index saw it: its attributes together with its bytes
    /// (a value kept in the index) or its open file (a value file).
    ///
    /// Returned by ``entry(forKey:)``. The attributes and the bytes come from the same row, so
    /// they always belong together: an overwrite of the key after the read changes neither. An
    /// open file stays readable for as long as the `Entry` lives, even when the key is
    /// overwritten, removed or evicted meanwhile (the file is then unlinked, not truncated); the
    /// descriptor is closed when the `Entry` is released.
    public final class Entry: Sendable {
        /// The entry's size, dates, metadata and validators, as the read found them.
        public let attributes: Attributes
        /// The value, when it is kept in the index (or staged in memory): `nil` for a value file.
        public let inlineBytes: Data?
        /// A read-only descriptor of the value file, positioned at its start; `nil` for a value
        /// kept in the index.
        ///
        /// Owned by the `Entry`, which closes it when released: read it with `pread(2)`, send it
        /// with `sendfile(2)`, or `dup(2)` it to keep it longer.
        public let fileDescriptor: Int32?
        /// The entry's ``Metadata/extra`` as the index stores it, when the read left it undecoded.
        ///
        /// Its JSON text, `nil` for none. Set by ``DiskCache/entry(forKey:decodingExtra:)`` with
        /// `decodingExtra: false` on a committed entry; ``attributes`` then has an empty `extra`.
        ///
        /// The text comes from the same row as the value, so a reader may keep what it decoded
        /// from it and reuse that whenever a later read returns the same text.
        package let storedExtra: String?
        /// Whether ``storedExtra`` is the row's text (the read left `extra` undecoded) rather
        /// than absent because ``attributes`` holds it decoded.
        package let hasStoredExtra: Bool

        init(
            attributes: Attributes, inlineBytes: Data?, fileDescriptor: Int32?, storedExtra: String? = nil,
            hasStoredExtra: Bool = false
        ) {
            self.attributes = attributes
            self.inlineBytes = inlineBytes
            self.fileDescriptor = fileDescriptor
            self.storedExtra = storedExtra
            self.hasStoredExtra = hasStoredExtra
        }

        deinit {
            if let fileDescriptor { _ = Foundation.close(fileDescriptor) }
        }

        /// The value's bytes: the inline bytes, or the whole file read through the open
        /// descriptor.
        ///
        /// - Throws: ``StashError`` with ``StashError/Code/io`` when the file cannot be read.
        /// - Complexity: O(*n*) in the value's length.
        public func data() throws -> Data {
            try bytes(in: 0..<attributes.size)
        }

        /// The bytes of the value in `range` (clamped to the value's length).
        ///
        /// - Throws: ``StashError`` with ``StashError/Code/io`` when the file cannot be read.
        /// - Complexity: O(*n*) in the range's length.
        public func bytes(in range: Range<Int>) throws -> Data {
            let lower = min(max(0, range.lowerBound), attributes.size)
            let upper = min(max(lower, range.upperBound), attributes.size)
            if let inlineBytes {
                let start = inlineBytes.startIndex
                return inlineBytes.subdata(in: (start + lower)..<(start + upper))
            }
            guard let fileDescriptor else { return Data() }
            do {
                return try POSIXFile.read(fileDescriptor, offset: lower, count: upper - lower)
            } catch {
                throw StashError(
                    .io, "Cannot read the value file of '\(attributes.key)': \(error).", cause: error)
            }
        }
    }

    /// The entry stored under `key`, its attributes with its bytes or its open file, from one
    /// read of the index; `nil` when there is none or it has expired.
    ///
    /// Use it where you need both what ``attributes(forKey:)`` and what ``data(forKey:)`` return:
    /// one index lookup instead of two, and no second read to check that the first is still
    /// true, since both come from one snapshot. A value kept in the index comes as
    /// ``Entry/inlineBytes``; a value file comes open, as ``Entry/fileDescriptor``, without
    /// reading it (``Entry/data()`` reads it). Counts as an access, as ``data(forKey:)`` does.
    ///
    /// Never returns a file that is not the entry's: value files are never rewritten in place,
    /// so the file opened is the one the row names; a file missing (an overwrite removed it
    /// between the lookup and the open) makes the read look again. A value file with the wrong
    /// length (or, with ``Configuration/verifiesChecksums``, the wrong checksum) is a miss, and
    /// its entry is dropped.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key,
    ///   ``StashError/Code/corrupt`` when the index is damaged, ``StashError/Code/io`` when a
    ///   file cannot be opened.
    /// - Complexity: O(log *N*), plus O(*n*) in the value's length for an inline value or a
    ///   verified file.
    public func entry(forKey key: String) throws -> Entry? {
        try entry(forKey: key, decodingExtra: true)
    }

    /// ``entry(forKey:)``, leaving a committed entry's `extra` metadata undecoded when
    /// `decodingExtra` is false: the entry then carries the stored text as
    /// ``Entry/storedExtra``, its attributes' metadata has only an empty `extra` (no content
    /// type or validators either), and their ``Attributes/lastAccess`` is the creation date.
    ///
    /// The read for a caller that decodes `extra` itself and keeps what it decoded (the proxy's
    /// disk hit): it reads fewer columns and skips the policy state's row. A staged entry comes
    /// decoded, as from ``entry(forKey:)``.
    ///
    /// `waitingForEviction: false` does not wait for the commit of a staged store that took the
    /// cache over a limit (every store of a full cache does): the read may then return an entry
    /// that the commit evicts (still whole: an open file stays readable, inline bytes are a copy),
    /// and the cache keeps the same entries as after a read that waited. For the proxy, whose
    /// disk hits would otherwise queue behind each commit of a full disk tier.
    ///
    /// - Throws: As ``entry(forKey:)``.
    /// - Complexity: As ``entry(forKey:)``.
    package func entry(forKey key: String, decodingExtra: Bool, waitingForEviction: Bool = true) throws -> Entry? {
        try Self.validate(key: key)
        for _ in 0..<3 {
            switch try stagedEntry(key, waitingForEviction: waitingForEviction) {
            case .notStaged: break
            case .moved: continue
            case .absent:
                counters.withLock { $0.misses += 1 }
                return nil
            case .entry(let entry):
                counted(hit: entry, key: key)
                return entry
            }
            guard let (stored, attributes, extra) = try lookUpEntry(key, decodingExtra: decodingExtra),
                try !isExpired(stored, key: key)
            else {
                counters.withLock { $0.misses += 1 }
                return nil
            }
            if let inline = stored.inline {
                guard inline.count == stored.size else {
                    try dropDamaged(
                        stored, key: key, reason: "inline value has \(inline.count) bytes, expected \(stored.size)")
                    return nil
                }
                if configuration.verifiesChecksums && Checksum.of(inline) != stored.checksum {
                    try dropDamaged(stored, key: key, reason: "checksum mismatch")
                    return nil
                }
                let entry = Entry(
                    attributes: attributes, inlineBytes: inline, fileDescriptor: nil, storedExtra: extra,
                    hasStoredExtra: !decodingExtra)
                counted(hit: entry, key: key)
                return entry
            }
            guard let file = stored.file else {
                try dropDamaged(stored, key: key, reason: "entry has neither inline bytes nor a file")
                return nil
            }
            let path = path(forFile: file)
            let opened: POSIXFile.OpenResult
            do {
                opened = try POSIXFile.openForReading(path, expectedSize: stored.size)
            } catch {
                throw readError(error, "Cannot open the value for '\(key)' at \(path)")
            }
            switch opened {
            case .opened(let descriptor):
                let entry = Entry(
                    attributes: attributes, inlineBytes: nil, fileDescriptor: descriptor, storedExtra: extra,
                    hasStoredExtra: !decodingExtra)
                if configuration.verifiesChecksums, try Checksum.of(entry.data()) != stored.checksum {
                    try dropDamaged(stored, key: key, reason: "checksum mismatch")
                    return nil
                }
                counted(hit: entry, key: key)
                return entry
            case .missing:
                // An overwrite or removal may have deleted the file after the lookup: look again.
                if try lookUp(key)?.file != file { continue }
                try dropDamaged(stored, key: key, reason: "value file \(file) is missing")
                return nil
            case .wrongSize(let actual):
                if try lookUp(key)?.file != file { continue }
                try dropDamaged(
                    stored, key: key, reason: "value file \(file) has \(actual) bytes, expected \(stored.size)")
                return nil
            }
        }
        counters.withLock { $0.misses += 1 }
        return nil
    }

    private func counted(hit entry: Entry, key: String) {
        recordAccess(Self.utf8(key), at: configuration.clock())
        counters.withLock { stats in
            stats.hits += 1
            stats.bytesRead += entry.attributes.size
        }
    }

    private enum StagedEntry {
        case notStaged
        case absent
        case entry(Entry)
        case moved
    }

    /// What ``entry(forKey:)`` finds in the staging area: a staged value comes with the
    /// attributes staged with it.
    private func stagedEntry(_ key: String, waitingForEviction: Bool) throws -> StagedEntry {
        guard let operation = stagedChange(forKey: key, waitingForEviction: waitingForEviction) else {
            return .notStaged
        }
        guard case .store(let value) = operation.change,
            value.isLive(at: configuration.clock().timeIntervalSince1970)
        else { return .absent }
        let attributes = try stagedAttributes(value, forKey: key)
        switch value.source {
        case .inline(let data):
            return .entry(Entry(attributes: attributes, inlineBytes: data, fileDescriptor: nil))
        case .file(let temporary):
            let opened: POSIXFile.OpenResult
            do {
                opened = try POSIXFile.openForReading(temporary.path, expectedSize: value.size)
            } catch {
                throw readError(error, "Cannot open the staged value for '\(key)' at \(temporary.path)")
            }
            guard case .opened(let descriptor) = opened else {
                // The writer renamed the file into place: its commit decides where the value is.
                commitStagedNow()
                return .moved
            }
            return .entry(Entry(attributes: attributes, inlineBytes: nil, fileDescriptor: descriptor))
        }
    }

    /// One indexed read of the row under the key's id, with everything ``Attributes`` holds
    /// and the bytes of an inline value; the key index only for a displaced entry.
    ///
    /// Without `decodingExtra`, a narrower read: no policy state (the last access is the
    /// creation date), no content type or validators, and `extra` returned as its text.
    private func lookUpEntry(_ key: String, decodingExtra: Bool) throws -> (StoredEntry, Attributes, String?)? {
        let pendingAccess: Date? = decodingExtra ? (accessLog.withLock { $0.lastAccess(of: Self.utf8(key)) }) : nil
        func decode(_ row: SQLiteRow) -> (StoredEntry, Attributes, String?) {
            let created = Date(timeIntervalSince1970: row.double(8))
            let expires = row.optionalDouble(5).map(Date.init(timeIntervalSince1970:))
            guard decodingExtra else {
                let attributes = Attributes(
                    key: key, size: row.int(2), created: created, lastAccess: created, expires: expires,
                    isPinned: row.int(6) != 0, isInline: row.isNull(3), metadata: Metadata())
                return (Self.storedEntry(row), attributes, row.text(9))
            }
            let accessed = Date(timeIntervalSince1970: row.double(9))
            let attributes = Attributes(
                key: key, size: row.int(2), created: created,
                lastAccess: max(accessed, pendingAccess ?? accessed), expires: expires,
                isPinned: row.int(6) != 0, isInline: row.isNull(3),
                metadata: Metadata(
                    contentType: row.text(10), etag: row.text(11), lastModified: row.text(12),
                    extra: Self.decodeExtra(row.text(13))))
            return (Self.storedEntry(row), attributes, nil)
        }
        return try wrapIndexErrors {
            try index.read { db in
                var key = key
                let direct = try key.withUTF8 { keyBytes -> (StoredEntry, Attributes, String?)?? in
                    let id = Self.entryID(forKey: UnsafeRawBufferPointer(keyBytes))
                    if !decodingExtra {
                        return try db.first(
                            """
                            SELECT key, id, size, file, checksum, expires, pinned, data, created, extra
                            FROM entries WHERE id = ?1
                            """, bindingInteger: id
                        ) { row in row.blob(0, equals: keyBytes) ? decode(row) : nil }
                    }
                    return try db.first(
                        """
                        SELECT e.key, e.id, e.size, e.file, e.checksum, e.expires, e.pinned, e.data, e.created,
                            s.accessed, e.content_type, e.etag, e.last_modified, e.extra
                        FROM entries e JOIN states s ON s.seq = e.seq WHERE e.id = ?1
                        """, bindingInteger: id
                    ) { row in row.blob(0, equals: keyBytes) ? decode(row) : nil }
                }
                if let direct, let found = direct { return found }
                guard try Self.hasDisplacedEntries(db) else { return nil }
                if !decodingExtra {
                    return try db.first(
                        """
                        SELECT key, id, size, file, checksum, expires, pinned, data, created, extra
                        FROM entries WHERE key = ?1 AND displaced = 1
                        """, bindingKey: key, map: decode)
                }
                return try db.first(
                    """
                    SELECT e.key, e.id, e.size, e.file, e.checksum, e.expires, e.pinned, e.data, e.created,
                        s.accessed, e.content_type, e.etag, e.last_modified, e.extra
                    FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1 AND e.displaced = 1
                    """, bindingKey: key, map: decode)
            }
        }
    }

    /// ``entry(forKey:)`` without blocking the caller's executor.
    ///
    /// - Throws: As ``entry(forKey:)``.
    /// - Complexity: As ``entry(forKey:)``.
    public func entry(forKey key: String) async throws -> Entry? {
        try await offload { try self.entry(forKey: key) }
    }

    /// ``entry(forKey:)`` with the value's bytes read, both off the caller's executor: what a
    /// reader that wants attributes and bytes together (the HTTP loader's disk hit) needs.
    package func attributesAndData(forKey key: String) async throws -> (attributes: Attributes, data: Data)? {
        try await offload {
            guard let entry = try self.entry(forKey: key) else { return nil }
            return (entry.attributes, try entry.data())
        }
    }
}
