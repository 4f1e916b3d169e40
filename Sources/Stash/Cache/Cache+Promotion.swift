import Foundation

extension Cache {
    /// The miss path of a read: reads and decodes the value on disk and promotes it to memory.
    ///
    /// Blocks on file I/O.
    @usableFromInline
    func readFromDisk(key: String, memoryKey: CacheKey) throws -> Value? {
        // Taken before the disk read, so that any store or removal of the key that could
        // interleave with this read is seen before the value is promoted.
        let snapshot = mutations.beginRead(memoryKey)
        defer { mutations.endRead(snapshot) }
        // One read: the bytes with the attributes of the same entry (its expiry bounds the promotion).
        guard let entry = try disk.entry(forKey: key) else {
            counters.withLock { $0.misses += 1 }
            return nil
        }
        let bytes = try entry.data()
        let value: Value
        do {
            value = try codec.decode(bytes)
        } catch {
            discardUndecodable(key: key, memoryKey: memoryKey, snapshot: snapshot, error: error)
            return nil
        }
        counters.withLock { $0.diskHits += 1 }
        promote(value, key: key, memoryKey: memoryKey, attributes: entry.attributes, snapshot: snapshot)
        return value
    }

    /// Keeps a value just read from disk in memory, for no longer than the disk entry lives
    /// (`attributes`, read with the value), unless a store or removal of the key overlapped the read.
    private func promote(
        _ value: Value, key: String, memoryKey: CacheKey, attributes: DiskCache.Attributes,
        snapshot: MutationTracker.Snapshot
    ) {
        guard mutations.isUnchanged(since: snapshot) else { return }
        var diskTimeToLive: Duration?
        if !attributes.isPinned, let expires = attributes.expires {
            let remaining = expires.timeIntervalSince(disk.configuration.clock())
            guard remaining > 0 else { return }
            diskTimeToLive = .seconds(remaining)
        }
        guard mutations.isUnchanged(since: snapshot) else { return }
        memory.setValue(value, forKey: memoryKey, cost: cost?(value), timeToLive: memoryTimeToLive(diskTimeToLive))
        if !mutations.isUnchanged(since: snapshot) {
            // A store or removal began between the check and the promotion: what was promoted may
            // already be stale. Disk decides.
            memory.removeValue(forKey: memoryKey)
        }
    }

    /// Counts, reports and removes an entry whose bytes the codec rejected.
    private func discardUndecodable(
        key: String, memoryKey: CacheKey, snapshot: MutationTracker.Snapshot, error: any Error
    ) {
        let decodingError =
            error as? StashError
            ?? StashError(
                .decodingFailed,
                "The bytes stored under '\(key)' are not a valid encoding of a \(Value.self) for "
                    + "\(type(of: codec)).",
                cause: error)
        counters.withLock { statistics in
            statistics.misses += 1
            statistics.decodingFailures += 1
        }
        var removalError: StashError?
        // If a store of this key overlapped the read, it may have replaced the bad bytes with good
        // ones: removing now could delete the good value. That store (or removal) takes care of
        // the entry instead.
        if mutations.isUnchanged(since: snapshot) {
            let ticket = mutations.begin(memoryKey)
            do {
                try disk.removeData(forKey: key)
            } catch {
                removalError =
                    error as? StashError
                    ?? StashError(.io, "Cannot remove the undecodable entry '\(key)'.", cause: error)
            }
            if mutations.end(ticket) {
                // A store that began meanwhile may have lost its disk entry to this removal.
                memory.removeValue(forKey: memoryKey)
            }
        }
        onEvent?(.decodingFailed(key: key, error: decodingError))
        if let removalError {
            // Deliberately tolerated: the read is a miss either way, and the next read of the key
            // tries the removal again.
            counters.withLock { $0.failedRemovals += 1 }
            onEvent?(.removalFailed(key: key, error: removalError))
        }
    }
}
