#if Metrics
    import Stash
    import StashHTTP

    /// One number read from a statistics snapshot, with the metric and tier it is reported as.
    ///
    /// The mapping from each statistics type to readings lives here, in one place: a counter added
    /// to a statistics type becomes a metric by adding one line to its function.
    struct StatisticsReading: Hashable, Sendable {
        var metric: CacheMetrics.Metric
        var tier: String
        var value: Int

        /// A memory tier's counters, with its total cost and entry count.
        static func memory(_ statistics: MemoryCacheStatistics, totalCost: Int, totalCount: Int) -> [Self] {
            [
                Self(metric: .hits, tier: "memory", value: statistics.hits),
                Self(metric: .misses, tier: "memory", value: statistics.misses),
                Self(metric: .evictions, tier: "memory", value: statistics.evictions),
                Self(metric: .notAdmitted, tier: "memory", value: statistics.notAdmitted),
                Self(metric: .size, tier: "memory", value: totalCost),
                Self(metric: .entries, tier: "memory", value: totalCount),
            ]
        }

        /// A disk tier's counters, with its totals when they could be read.
        static func disk(_ statistics: DiskCache.Statistics, totalSize: Int?, totalCount: Int?) -> [Self] {
            var readings = [
                Self(metric: .hits, tier: "disk", value: statistics.hits),
                Self(metric: .misses, tier: "disk", value: statistics.misses),
                Self(metric: .evictions, tier: "disk", value: statistics.evictions),
                Self(metric: .notAdmitted, tier: "disk", value: statistics.notAdmitted),
                Self(metric: .bytesRead, tier: "disk", value: statistics.bytesRead),
                Self(metric: .bytesWritten, tier: "disk", value: statistics.bytesWritten),
            ]
            if let totalSize { readings.append(Self(metric: .size, tier: "disk", value: totalSize)) }
            if let totalCount { readings.append(Self(metric: .entries, tier: "disk", value: totalCount)) }
            return readings
        }

        /// A loader's own counters: what reached the network, and entries served stale.
        static func loader(_ statistics: ResourceLoader.Statistics) -> [Self] {
            [
                Self(metric: .requests, tier: "network", value: statistics.requests),
                Self(metric: .bytesRead, tier: "network", value: statistics.bytesReceived),
                Self(metric: .notModified, tier: "network", value: statistics.notModified),
                Self(metric: .retries, tier: "network", value: statistics.retries),
                Self(metric: .failedTransfers, tier: "network", value: statistics.failedTransfers),
                Self(metric: .staleServes, tier: "disk", value: statistics.staleServes),
            ]
        }
    }
#endif
