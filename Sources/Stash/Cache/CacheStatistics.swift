/// Counters that describe how a ``Cache`` has been used since it was created, with each
/// tier's own counters.
///
/// Read a snapshot with ``Cache/statistics``. The ``Cache``'s counters, the memory tier's and
/// the disk tier's are each consistent, but they are read one after the other, so while other
/// threads use the cache they may be a few operations apart.
public struct CacheStatistics: Hashable, Sendable, CustomStringConvertible {
    /// Reads served by the memory tier.
    public var memoryHits: Int
    /// Reads served by the disk tier (then promoted to memory).
    public var diskHits: Int
    /// Reads served by the shared tier (``Cache/sharedTier``), then kept on disk and in memory.
    public var sharedHits: Int
    /// Reads that found no value in any tier, including values that could not be decoded.
    public var misses: Int
    /// Shared-tier lookups, writes and removals that failed; each lookup counted as a miss.
    public var sharedFailures: Int
    /// Stored values that the codec could not decode; each was also counted as a miss, and its
    /// entry removed.
    public var decodingFailures: Int
    /// Undecodable entries that could not be removed from disk.
    public var failedRemovals: Int
    /// The memory tier's own counters.
    public var memory: MemoryCacheStatistics
    /// The disk tier's own counters.
    public var disk: DiskCache.Statistics

    /// All zero; ``Cache`` fills in the tiers' counters when it hands out a snapshot.
    init() {
        memoryHits = 0
        diskHits = 0
        sharedHits = 0
        misses = 0
        sharedFailures = 0
        decodingFailures = 0
        failedRemovals = 0
        memory = MemoryCacheStatistics()
        disk = DiskCache.Statistics()
    }

    /// Reads that returned a value, from any tier.
    public var hits: Int { memoryHits + diskHits + sharedHits }

    /// The fraction of reads that returned a value, or `0` before the first read.
    public var hitRatio: Double {
        let reads = hits + misses
        return reads == 0 ? 0 : Double(hits) / Double(reads)
    }

    /// A one-line summary: `memory hits 3, disk hits 1, misses 2, decoding failures 0`.
    public var description: String {
        "memory hits \(memoryHits), disk hits \(diskHits), misses \(misses), decoding failures \(decodingFailures)"
    }
}
