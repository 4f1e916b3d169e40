#if Tool
    /// Counters of what `stash` commands did with one cache directory, kept across invocations in
    /// ``ToolState``.
    struct ToolStatistics: Codable, Equatable {
        /// `get` calls that found their key.
        var getHits = 0
        /// `get` calls that did not.
        var getMisses = 0
        /// `fetch`es answered from a loader's memory tier.
        var memoryHits = 0
        /// `fetch`es answered from disk without a request.
        var diskHits = 0
        /// `fetch`es answered from disk after a `304 Not Modified`.
        var revalidated = 0
        /// `fetch`es answered with a full download.
        var downloads = 0
        /// `fetch`es that failed.
        var fetchFailures = 0
        /// Bytes served from the cache (hits and revalidations).
        var bytesServed = 0
        /// Bytes downloaded by `fetch`.
        var bytesDownloaded = 0
        /// Entries evicted by `stash` commands (size limit or `trim`).
        var evictions = 0

        /// Reads served from the cache, a 304 included.
        var hits: Int { getHits + memoryHits + diskHits + revalidated }
        /// Reads that had to download, or found nothing.
        var misses: Int { getMisses + downloads }

        /// `hits / (hits + misses)`, or `nil` before any read.
        var hitRatio: Double? {
            hits + misses == 0 ? nil : Double(hits) / Double(hits + misses)
        }
    }

    extension ToolStatistics {
        /// Adds `other`'s counters to these.
        mutating func add(_ other: ToolStatistics) {
            getHits += other.getHits
            getMisses += other.getMisses
            memoryHits += other.memoryHits
            diskHits += other.diskHits
            revalidated += other.revalidated
            downloads += other.downloads
            fetchFailures += other.fetchFailures
            bytesServed += other.bytesServed
            bytesDownloaded += other.bytesDownloaded
            evictions += other.evictions
        }
    }
#endif
