import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a value file's index row holds, kept with the file so that a lost or damaged index can
/// be rebuilt from the files alone.
///
/// The value file itself stays the raw bytes (``DiskCache/fileURL(forKey:)`` hands it to
/// players and viewers), so the description lives beside them: a first line `stash-meta 1`,
/// then one JSON object, in the file's extended attribute `user.stash.meta` where the file
/// system keeps one that large, else (and always for a pinned value or in a durable cache) in
/// a sidecar file `<name>.meta`. It is written inside the same write transaction as the value
/// file is renamed into place, and rewritten whenever the row's pinned state, expiry or
/// metadata change, so a committed row always has a matching description. A sidecar file,
/// where there is one, wins over the attribute.
///
/// The attribute is what makes a file per value affordable: a sidecar file doubled the inodes a
/// store creates, and creating an inode is most of what a store of 32 KiB - 2 MiB costs
/// (Benchmarks/README.md, "Value files, 32 KiB - 2 MiB").
struct ValueSidecar: Codable, Equatable {
    /// The first line of every sidecar; the number is the format version.
    static let magic = Data("stash-meta 1\n".utf8)
    /// The suffix added to the value file's name.
    static let suffix = ".meta"
    /// The extended attribute of the value file that holds the description.
    static let attributeName = "user.stash.meta"

    /// The key's UTF-8 bytes, base64-encoded so that any key survives JSON unchanged.
    var key: String
    var size: Int
    var checksum: UInt64
    var pinned: Bool
    var created: Double
    var expires: Double?
    var contentType: String?
    var etag: String?
    var lastModified: String?
    var extra: String?

    /// The key bytes the sidecar names, or `nil` when the base64 text is damaged.
    var keyBytes: Data? { Data(base64Encoded: key) }

    /// The description's bytes: ``magic``, then the JSON object.
    ///
    /// Its members come in sorted order, as `JSONEncoder` with `.sortedKeys` writes them and
    /// `JSONDecoder` reads them back, and a missing optional is left out. Written by hand: the
    /// writer describes every value file it publishes, and `JSONEncoder` cost several times this.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/io`` for a date that is not finite.
    func encoded() throws -> Data {
        guard created.isFinite, expires?.isFinite ?? true else {
            throw StashError(.io, "Cannot describe the value file of an entry whose dates are not finite.")
        }
        var bytes = Array(Self.magic)
        bytes.reserveCapacity(160 + key.utf8.count + (extra?.utf8.count ?? 0) * 9 / 8)
        func member(_ name: StaticString, _ first: Bool = false) {
            bytes.append(UInt8(ascii: first ? "{" : ","))
            bytes.append(0x22)
            bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            bytes += [0x22, UInt8(ascii: ":")]
        }
        func string(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            member(name)
            ExtraJSON.append(value, to: &bytes)
        }
        member("checksum", true)
        bytes += String(checksum).utf8
        string("contentType", contentType)
        member("created")
        bytes += created.description.utf8
        string("etag", etag)
        if let expires {
            member("expires")
            bytes += expires.description.utf8
        }
        string("extra", extra)
        string("key", key)
        string("lastModified", lastModified)
        member("pinned")
        bytes += (pinned ? "true" : "false").utf8
        member("size")
        bytes += String(size).utf8
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// Decodes a sidecar, or returns `nil` for anything that is not one of ours.
    static func decode(_ data: Data) -> ValueSidecar? {
        guard data.starts(with: magic) else { return nil }
        return try? JSONDecoder().decode(ValueSidecar.self, from: data.dropFirst(magic.count))
    }

    /// The description of the value file at `valuePath`: its sidecar file when `hasFile`,
    /// else its extended attribute; `nil` when neither holds one of ours.
    static func read(describing valuePath: String, hasFile: Bool) -> ValueSidecar? {
        if hasFile, let bytes = FileManager.default.contents(atPath: valuePath + suffix), let sidecar = decode(bytes) {
            return sidecar
        }
        return POSIXFile.attribute(attributeName, ofFile: valuePath).flatMap(decode)
    }
}

extension DiskCache {
    /// The path of the sidecar describing the value file `file` (a name relative to `data/`).
    func sidecarPath(forFile file: String) -> String { path(forFile: file) + ValueSidecar.suffix }

    /// Removes a value file and its sidecar; a failure leaves orphans that the collector removes.
    func removeValueFile(_ file: String) {
        try? POSIXFile.remove(path(forFile: file))
        try? POSIXFile.remove(sidecarPath(forFile: file))
    }

    /// Writes the description of the entry `id` from its row, when the entry lives in a file.
    ///
    /// Into the value file's extended attribute, unless the value is pinned, the cache is
    /// ``Durability/durable``, the file system keeps none that large or the file already has a
    /// sidecar file; else into the sidecar file, atomically (a temporary file, then rename).
    /// Call it inside the write transaction that changed the row, so that the description and
    /// the row commit together or not at all. `isNewFile` says that the file was published in
    /// this transaction, so that no sidecar file can exist yet.
    func writeSidecar(forEntry id: Int64, in db: SQLiteConnection, isNewFile: Bool = false) throws {
        let row = try db.first(
            """
            SELECT key, size, file, checksum, created, expires, pinned, content_type, etag, last_modified, extra
            FROM entries WHERE id = ?1
            """, [.integer(id)]
        ) { row -> (String, ValueSidecar)? in
            guard let file = row.text(2) else { return nil }
            return (
                file,
                ValueSidecar(
                    key: (row.blob(0) ?? Data()).base64EncodedString(), size: row.int(1),
                    checksum: UInt64(bitPattern: row.int64(3)), pinned: row.int(6) != 0, created: row.double(4),
                    expires: row.optionalDouble(5), contentType: row.text(7), etag: row.text(8),
                    lastModified: row.text(9), extra: row.text(10))
            )
        }
        guard let (file, sidecar) = row ?? nil else { return }
        let bytes = try sidecar.encoded()
        let destination = sidecarPath(forFile: file)
        // A pinned value's description stays a file, which survives copies that drop extended
        // attributes (cp, rsync without -X): pinned values are always recoverable. So does a
        // durable cache's, which is synced like the value.
        if !sidecar.pinned && configuration.durability != .durable && (isNewFile || access(destination, F_OK) != 0) {
            do {
                try checkInjectedWriteFault(destination)
                if try POSIXFile.setAttribute(ValueSidecar.attributeName, to: bytes, ofFile: path(forFile: file)) {
                    return
                }
            } catch {
                throw ioError(error, "Cannot write the description of the value file \(file) into \(root)/data")
            }
        }
        // Beside its destination, not in tmp/: the value file's directory exists by now, and the
        // orphan collector, which removes a leftover after a crash, waits for this transaction.
        let temporary = destination + ".tmp"
        do {
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            guard fd >= 0 else { throw POSIXFile.error("open \(temporary)") }
            defer { Foundation.close(fd) }
            do {
                try checkInjectedWriteFault(temporary)
                try bytes.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: temporary) }
                if configuration.durability == .durable { try POSIXFile.sync(fd, path: temporary) }
                try POSIXFile.rename(temporary, destination)
            } catch {
                try? POSIXFile.remove(temporary)  // never leave a partial temporary file behind
                throw error
            }
        } catch {
            throw ioError(error, "Cannot write the description of the value file \(file) into \(root)/data")
        }
    }
}

extension DiskCache {
    /// Moves the inline value of the entry `id` into a value file.
    ///
    /// Pinning a small value so makes it recoverable from the files like every other pinned
    /// value. Call it inside
    /// the write transaction; a rollback leaves at worst an orphan file.
    func moveInlineValueToFile(entry id: Int64, key: String, in db: SQLiteConnection) throws {
        let data = try db.first(
            "SELECT data FROM entries WHERE id = ?1 AND file IS NULL",
            [.integer(id)]
        ) { $0.blob(0) ?? Data() }
        guard let data else { return }
        let temporary = try temporaryFile(holding: data, forKey: key)
        let fileName = newValueFileName()
        do {
            try moveValueFile(temporary.path, to: fileName)
        } catch {
            discardTemporary(path: temporary.path, descriptor: temporary.descriptor)
            throw error
        }
        Foundation.close(temporary.descriptor)
        try db.run("UPDATE entries SET file = ?1, data = NULL WHERE id = ?2", [.text(fileName), .integer(id)])
    }
}
