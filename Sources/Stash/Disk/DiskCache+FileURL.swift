import Foundation

extension DiskCache {
    /// A file URL holding the value stored under `key`, or `nil` when there is none.
    ///
    /// Hand it to a player, viewer or upload API instead of loading the bytes. The file stays
    /// valid while the entry exists; overwriting, removing or evicting the entry deletes it, so
    /// copy or open it promptly. A value stored inline in the index is first moved to a file
    /// of its own (once).
    ///
    /// - Important: Treat the file as read-only: changing it corrupts the entry (which the
    ///   next verified read then drops).
    /// - Throws: ``StashError`` for an empty key, or when the index or directory cannot be
    ///   written.
    /// - Complexity: O(log *N*), plus O(*n*) the first time an inline value is materialised.
    public func fileURL(forKey key: String) throws -> URL? {
        try Self.validate(key: key)
        let keyBytes = Self.utf8(key)
        if let staged = stagedChange(forKey: key) {
            guard case .store = staged.change else {
                counters.withLock { $0.misses += 1 }
                return nil
            }
            // A staged value gets its file (and row) before its URL is handed out.
            commitStagedNow()
        }
        for _ in 0..<3 {
            guard let entry = try lookUp(keyBytes) else { break }
            if !entry.isPinned, let expires = entry.expires, expires <= configuration.clock().timeIntervalSince1970 {
                break
            }
            if let file = entry.file {
                let path = path(forFile: file)
                guard POSIXFile.size(path)?.logical == entry.size else {
                    if try lookUp(keyBytes)?.file != file { continue }
                    _ = try data(forKey: key)  // the read path drops the damaged entry and reports it
                    return nil
                }
                recordAccess(keyBytes, at: configuration.clock())
                counters.withLock { $0.hits += 1 }
                return URL(fileURLWithPath: path)
            }
            if let url = try materialise(entry, key: key) {
                recordAccess(keyBytes, at: configuration.clock())
                counters.withLock { $0.hits += 1 }
                return url
            }
        }
        counters.withLock { $0.misses += 1 }
        return nil
    }

    /// Moves an inline value into a file of its own; `nil` when the entry changed meanwhile.
    private func materialise(_ entry: StoredEntry, key: String) throws -> URL? {
        guard let bytes = entry.inline else { return nil }
        let temporary = try temporaryFile(holding: bytes, forKey: key)
        let fileName = newValueFileName()
        let destination = path(forFile: fileName)
        var renamed = false
        let updated: Bool
        do {
            updated = try index.write { db in
                try moveValueFile(temporary.path, to: fileName)
                renamed = true
                let changed = try db.run(
                    "UPDATE entries SET file = ?1, data = NULL WHERE id = ?2 AND file IS NULL AND checksum = ?3",
                    [.text(fileName), .integer(entry.id), .integer(Int64(bitPattern: entry.checksum))])
                if changed > 0 {
                    try writeSidecar(forEntry: entry.id, in: db, isNewFile: true)
                }
                return changed > 0
            }
        } catch {
            discardTemporary(path: renamed ? destination : temporary.path, descriptor: temporary.descriptor)
            throw index.indexError(error)
        }
        Foundation.close(temporary.descriptor)
        guard updated else {
            try? POSIXFile.remove(destination)  // never published; an orphan at worst
            return nil
        }
        return URL(fileURLWithPath: destination)
    }
}
