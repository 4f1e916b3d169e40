import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// Faults that tests inject at the cache's write calls, so that a full disk or a failing
    /// device can be exercised on any machine.
    struct FaultInjection {
        /// Called with the path about to be written; a non-nil `errno` makes the write fail so.
        var write: (@Sendable (String) -> Int32?)?
    }

    /// Throws the `errno` that an injected fault chooses for a write to `path`, if any.
    func checkInjectedWriteFault(_ path: String) throws(POSIXErrorCode) {
        guard let fault = faults.withLock({ $0.write }), let code = fault(path) else { return }
        throw POSIXErrorCode(operation: "write \(path)", errno: code)
    }

    /// The byte limit eviction keeps to: ``Configuration/sizeLimit``, or less after a full disk
    /// lowered it to what the disk holds.
    ///
    /// - Complexity: O(1).
    public var effectiveSizeLimit: ByteCount {
        counters.withLock { $0.effectiveSizeLimit } ?? configuration.sizeLimit
    }

    /// Runs a store; when the disk is full, evicts room for `size` bytes and retries, then
    /// evicts every unpinned entry and retries, lowering ``effectiveSizeLimit`` to what the disk
    /// held so that later stores evict before they fill it again.
    ///
    /// Each attempt cleans up after itself (the temporary file is removed on failure), so no
    /// partial file is left whatever the outcome.
    func withDiskFullRecovery(size: Int, forKey key: String, _ store: () throws -> Void) throws {
        var failure: StashError
        do {
            return try store()
        } catch let error as StashError where error.code == .diskFull {
            failure = error
        }
        for round in 0..<2 {
            let (total, pinned) = try (totalSize.bytes, pinnedSize.bytes)
            let unpinned = total - pinned
            guard unpinned > 0 else { break }
            // The disk held `unpinned` bytes of values (and the index) but not `size` more: a
            // limit `size` lower lets the next such store evict before the disk fills.
            let lowered = counters.withLock { stats -> ByteCount in
                let limit = min(
                    stats.effectiveSizeLimit ?? configuration.sizeLimit, ByteCount(max(unpinned - size, 1)))
                stats.effectiveSizeLimit = limit
                stats.diskFullRetries += 1
                return limit
            }
            configuration.onEvent?(.diskFull(effectiveSizeLimit: lowered))
            // Twice the value's size: file-system blocks and the sidecar need room too.
            let target = ByteCount(round == 0 ? max(0, unpinned - 2 * size) : 0)
            do {
                try trim(toSize: target)
            } catch let error as StashError where error.code == .diskFull {
                // Deleting rows needs room in the write-ahead log too: free file space first.
                try removeFilesBeforeRows(freeing: max(2 * size, 1))
                try trim(toSize: target)
            }
            do {
                return try store()
            } catch let error as StashError where error.code == .diskFull {
                failure = error
            }
        }
        let pinned = (try? pinnedSize) ?? .zero
        throw StashError(
            .diskFull,
            "Cannot store '\(key)' (\(ByteCount(size))): the disk holding \(root) is full and no unpinned entry is left to evict (pinned entries hold \(pinned)); free space on the disk or unpin entries.",
            cause: failure)
    }

    /// Makes room after the background writer's batch of `bytes` met a full disk.
    ///
    /// Lowers ``effectiveSizeLimit`` to what the disk held and evicts room (round 0) or every
    /// unpinned entry (round 1) from the committed entries. Runs on the writer's queue.
    ///
    /// - Returns: `false` when no unpinned entry is left to evict.
    func makeRoomAfterFullDisk(for bytes: Int, round: Int) throws -> Bool {
        let totals = try wrapIndexErrors {
            try index.read { db in
                try db.first("SELECT size - pinned_size FROM totals WHERE id = 1") { $0.int(0) }
            }
        }
        let unpinned = totals ?? 0
        guard unpinned > 0 else { return false }
        let lowered = counters.withLock { stats -> ByteCount in
            let limit = min(stats.effectiveSizeLimit ?? configuration.sizeLimit, ByteCount(max(unpinned - bytes, 1)))
            stats.effectiveSizeLimit = limit
            stats.diskFullRetries += 1
            return limit
        }
        configuration.onEvent?(.diskFull(effectiveSizeLimit: lowered))
        let target = round == 0 ? max(0, unpinned - 2 * bytes) : 0
        do {
            try trimCommitted(targetSize: target, targetCount: .max)
        } catch let error as StashError where error.code == .diskFull {
            try removeFilesBeforeRows(freeing: max(2 * bytes, 1))
            try trimCommitted(targetSize: target, targetCount: .max)
        }
        return true
    }

    /// The last resort when even eviction's transaction finds no room.
    ///
    /// Unlinks the files of the lowest-ranked unpinned entries first, then deletes their rows
    /// in a transaction that now fits. Between the two a read finds the file missing: a miss, never wrong bytes.
    private func removeFilesBeforeRows(freeing bytes: Int) throws {
        let candidates = try wrapIndexErrors {
            try index.read { db in
                var rows: [(key: String, size: Int, file: String)] = []
                try db.query(
                    """
                    SELECT e.key, e.size, e.file FROM states s JOIN entries e ON e.seq = s.seq
                    WHERE s.pinned = 0 AND e.file IS NOT NULL ORDER BY s.rank LIMIT 256
                    """
                ) { row in
                    rows.append((String(decoding: row.blob(0) ?? Data(), as: UTF8.self), row.int(1), row.text(2)!))
                }
                return rows
            }
        }
        var freed = 0
        var victims: [Victim] = []
        for candidate in candidates where freed < bytes {
            removeValueFile(candidate.file)
            freed += candidate.size
            victims.append(Victim(key: candidate.key, size: candidate.size, file: nil, reason: .sizeLimit))
        }
        guard !victims.isEmpty else { return }
        try wrapIndexErrors {
            try index.write { db in
                for victim in victims {
                    if let id = try Self.storedID(forKey: Self.utf8(victim.key), in: db) {
                        try db.run("DELETE FROM entries WHERE id = ?1 AND pinned = 0", [.integer(id)])
                    }
                }
            }
        }
        finishEviction(victims)
    }
}
