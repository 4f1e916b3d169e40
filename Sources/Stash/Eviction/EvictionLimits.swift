/// A cache's limits as eviction sees them: when to start evicting and down to what.
///
/// Shared by DiskCache and the simulator so that both decide identically.
package struct EvictionLimits: Sendable, Hashable {
    package var sizeLimit: Int
    package var countLimit: Int
    package var lowWaterMark: Double
    /// The most a batch evicts below the limit, in bytes, or `nil` for no bound (see
    /// `DiskCache.Configuration.maximumEvictionBatch`); with a bound, a count limit's batch is at
    /// most `maximumBatchCount` entries.
    package var maximumBatch: Int?
    package static let defaultMaximumBatch = 1 << 20
    package static let maximumBatchCount = 1024

    package init(
        sizeLimit: Int, countLimit: Int?, lowWaterMark: Double, maximumBatch: Int? = EvictionLimits.defaultMaximumBatch
    ) {
        self.sizeLimit = sizeLimit
        self.countLimit = countLimit ?? .max
        self.lowWaterMark = lowWaterMark
        self.maximumBatch = maximumBatch
    }

    /// Whether unpinned totals exceed a limit, so that a write must evict.
    package func areExceeded(by evictable: (size: Int, count: Int)) -> Bool {
        evictable.size > sizeLimit || evictable.count > countLimit
    }

    /// The byte total eviction goes down to.
    package var targetSize: Int {
        let mark = Int(Double(sizeLimit) * lowWaterMark)
        guard let maximumBatch else { return mark }
        return max(mark, sizeLimit - maximumBatch)
    }

    /// The entry count eviction goes down to.
    package var targetCount: Int {
        guard countLimit != .max else { return .max }
        let mark = Int(Double(countLimit) * lowWaterMark)
        guard maximumBatch != nil else { return mark }
        return max(mark, countLimit - Self.maximumBatchCount)
    }
}
