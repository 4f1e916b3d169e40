/// A cache's limits as eviction sees them: when to start evicting and down to what.
///
/// Shared by DiskCache and the simulator so that both decide identically.
package struct EvictionLimits: Sendable, Hashable {
    package var sizeLimit: Int
    package var countLimit: Int
    package var lowWaterMark: Double

    package init(sizeLimit: Int, countLimit: Int?, lowWaterMark: Double) {
        self.sizeLimit = sizeLimit
        self.countLimit = countLimit ?? .max
        self.lowWaterMark = lowWaterMark
    }

    /// Whether unpinned totals exceed a limit, so that a write must evict.
    package func areExceeded(by evictable: (size: Int, count: Int)) -> Bool {
        evictable.size > sizeLimit || evictable.count > countLimit
    }

    /// The byte total eviction goes down to.
    package var targetSize: Int { Int(Double(sizeLimit) * lowWaterMark) }

    /// The entry count eviction goes down to.
    package var targetCount: Int { countLimit == .max ? .max : Int(Double(countLimit) * lowWaterMark) }
}
