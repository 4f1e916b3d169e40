/// Counters that describe how a ``MemoryCache`` has been used since it was created.
///
/// Read a consistent snapshot with ``MemoryCache/statistics``.
public struct MemoryCacheStatistics: Hashable, Sendable, CustomStringConvertible {
    /// Lookups that found a live value.
    public var hits: Int
    /// Lookups that found nothing, or found an entry whose time-to-live had passed.
    public var misses: Int
    /// Entries dropped to respect a limit, by a trim, or under memory pressure.
    ///
    /// Entries dropped by ``MemoryCache/removeAll()`` are not counted.
    public var evictions: Int
    /// Entries removed because their time-to-live had passed.
    public var expirations: Int
    /// Values stored, including those that replaced an earlier value for the same key.
    ///
    /// A value refused because its cost is over the per-entry limit is not counted.
    public var insertions: Int
    /// Values the admission policy turned away as they were stored
    /// (``MemoryEvictionReason/notAdmitted``); also counted in ``insertions`` and ``evictions``.
    public var notAdmitted = 0

    /// Creates statistics; every counter defaults to zero.
    ///
    /// - Parameters:
    ///   - hits: Lookups that found a live value.
    ///   - misses: Lookups that found nothing or an expired entry.
    ///   - evictions: Entries dropped for a limit, a trim or memory pressure.
    ///   - expirations: Entries removed because their time-to-live had passed.
    ///   - insertions: Values stored.
    public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0, expirations: Int = 0, insertions: Int = 0) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
        self.expirations = expirations
        self.insertions = insertions
    }

    /// The fraction of lookups that were hits, or `0` before the first lookup.
    public var hitRatio: Double {
        let lookups = hits + misses
        return lookups == 0 ? 0 : Double(hits) / Double(lookups)
    }

    /// A one-line summary: `hits 3, misses 1, evictions 0, expirations 0, insertions 4`.
    public var description: String {
        "hits \(hits), misses \(misses), evictions \(evictions), expirations \(expirations), insertions \(insertions)"
    }
}
