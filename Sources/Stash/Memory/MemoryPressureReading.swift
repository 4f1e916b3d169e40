/// One sample of how much memory is in use and how long tasks stall waiting for it, as a
/// ``MemoryPressureMonitor`` polls it on Linux.
///
/// Build one from the kernel's files with ``init(files:)``, or make one by hand to drive a
/// monitor in tests. ``level(thresholds:)`` turns it into a ``MemoryPressureLevel``.
public struct MemoryPressureReading: Hashable, Sendable, CustomStringConvertible {
    /// The share of the last ten seconds, in percent, during which a task stalled on memory.
    ///
    /// This is the `some avg10` value (0–100) of Linux pressure stall information (PSI): the
    /// time during which at least one task waited for memory. `nil` when the kernel does not
    /// provide PSI.
    public var stallPercentage: Double?

    /// Bytes in use, not counting page cache that the kernel can reclaim at once.
    ///
    /// `nil` when unknown.
    public var usedBytes: Int?

    /// The bytes that ``usedBytes`` may grow to.
    ///
    /// The control group's memory limit, or the machine's memory. `nil` when unknown.
    public var limitBytes: Int?

    /// Creates a reading.
    ///
    /// - Parameters:
    ///   - stallPercentage: PSI `some avg10`, in percent.
    ///   - usedBytes: Bytes in use, without reclaimable page cache.
    ///   - limitBytes: The limit that `usedBytes` counts against.
    public init(stallPercentage: Double? = nil, usedBytes: Int? = nil, limitBytes: Int? = nil) {
        self.stallPercentage = stallPercentage
        self.usedBytes = usedBytes
        self.limitBytes = limitBytes
    }

    /// ``usedBytes`` as a fraction of ``limitBytes``, or `nil` if either is unknown.
    public var usedFraction: Double? {
        guard let usedBytes, let limitBytes, limitBytes > 0 else { return nil }
        return Double(usedBytes) / Double(limitBytes)
    }

    /// The pressure level this reading shows: the higher of the level from stalls and the
    /// level from usage.
    ///
    /// - Parameter thresholds: Where the levels begin. Defaults to `Thresholds()`.
    /// - Returns: ``MemoryPressureLevel/normal`` when neither measure is known.
    public func level(thresholds: Thresholds = Thresholds()) -> MemoryPressureLevel {
        func level(_ value: Double?, warning: Double, critical: Double) -> MemoryPressureLevel {
            guard let value else { return .normal }
            if value >= critical { return .critical }
            if value >= warning { return .warning }
            return .normal
        }
        return max(
            level(
                stallPercentage, warning: thresholds.warningStallPercentage,
                critical: thresholds.criticalStallPercentage),
            level(
                usedFraction, warning: thresholds.warningUsedFraction, critical: thresholds.criticalUsedFraction)
        )
    }

    /// `stall 1.5%, used 812 MB of 1.0 GB`; unknown parts are left out.
    public var description: String {
        var parts: [String] = []
        if let stallPercentage { parts.append("stall \(stallPercentage)%") }
        if let usedBytes, let limitBytes {
            parts.append("used \(ByteCount(usedBytes)) of \(ByteCount(limitBytes))")
        }
        return parts.isEmpty ? "no data" : parts.joined(separator: ", ")
    }

    /// Where each ``MemoryPressureLevel`` begins.
    ///
    /// The defaults come from what the two measures mean. PSI counts wall-clock time lost to
    /// memory stalls: at 10 % a workload's latency visibly suffers (the kernel's PSI
    /// documentation uses 150 ms per second as its example trigger), and at 40 % it is
    /// thrashing. Usage excludes reclaimable page cache, so 85 % of the limit leaves the
    /// kernel little to reclaim before it must swap or kill, and 95 % is the last step before
    /// the out-of-memory killer.
    public struct Thresholds: Hashable, Sendable {
        /// The PSI `some avg10` at which pressure is a warning; defaults to 10 (percent).
        public var warningStallPercentage: Double
        /// The PSI `some avg10` at which pressure is critical; defaults to 40 (percent).
        public var criticalStallPercentage: Double
        /// The ``MemoryPressureReading/usedFraction`` at which pressure is a warning; defaults to 0.85.
        public var warningUsedFraction: Double
        /// The ``MemoryPressureReading/usedFraction`` at which pressure is critical; defaults to 0.95.
        public var criticalUsedFraction: Double

        /// Creates thresholds; each warning threshold should be below its critical one.
        ///
        /// - Parameters:
        ///   - warningStallPercentage: Defaults to 10.
        ///   - criticalStallPercentage: Defaults to 40.
        ///   - warningUsedFraction: Defaults to 0.85.
        ///   - criticalUsedFraction: Defaults to 0.95.
        public init(
            warningStallPercentage: Double = 10,
            criticalStallPercentage: Double = 40,
            warningUsedFraction: Double = 0.85,
            criticalUsedFraction: Double = 0.95
        ) {
            self.warningStallPercentage = warningStallPercentage
            self.criticalStallPercentage = criticalStallPercentage
            self.warningUsedFraction = warningUsedFraction
            self.criticalUsedFraction = criticalUsedFraction
        }
    }
}
