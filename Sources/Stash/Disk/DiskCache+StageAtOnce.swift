import Foundation

extension DiskCache {
    /// Stores `data` under `key` when that takes no file I/O and no wait; `false` otherwise.
    ///
    /// It stores as ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` does (unpinned, with
    /// the default time-to-live), under
    /// ``WriteMode/writeBehind``, for a value the staging area keeps in memory (below
    /// ``Configuration/inlineThreshold``, or of any size when the background writer writes value
    /// files) while the staging area has room for it. Returns `false`, having changed nothing,
    /// when the store would have to write a file, commit, or wait for the writer: the caller
    /// then stores it with ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` on a thread that
    /// may block.
    ///
    /// For a caller on a thread that must not wait for the disk (an event loop): the checksum is
    /// all the work it does on the value's bytes.
    ///
    /// - Throws: As ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``, and the failure of a
    ///   background commit not reported yet.
    /// - Complexity: O(*n*) in the value's length (its checksum).
    package func storeIfStagedAtOnce(_ data: Data, forKey key: String, metadata: Metadata = Metadata()) throws
        -> Bool
    {
        guard writesBehind, configuration.durability != .durable,
            data.count < configuration.inlineThreshold.bytes || configuration.writesValueFilesInBackground
        else { return false }
        try Self.validate(key: key)
        try checkSize(data.count, forKey: key, pinned: nil)
        // The index keeps seconds since 1970 as a double (see `stageStore`).
        let now = Date(timeIntervalSince1970: configuration.clock().timeIntervalSince1970)
        let expires = try Self.expiry(forKey: key, timeToLive: configuration.defaultTimeToLive, now: now)
        let value = StagingArea.StagedValue(
            source: .inline(data), size: data.count, checksum: Checksum.of(data), created: now, expires: expires,
            pinned: nil, metadata: metadata, mayBeTurnedAway: true)
        guard try stage(.store(value), forKey: key, waitsForRoom: false) else { return false }
        counters.withLock { stats in
            stats.writes += 1
            stats.bytesWritten += data.count
        }
        return true
    }
}
