/// How short of memory the system or the process's control group is.
///
/// Levels are ordered: `.normal < .warning < .critical`.
public enum MemoryPressureLevel: Int, Comparable, Hashable, Sendable, CustomStringConvertible {
    /// There is enough memory.
    case normal
    /// Memory is getting short: caches should give back about half of what they hold.
    case warning
    /// Memory is nearly exhausted: caches should give back everything they can.
    case critical

    /// Orders levels by severity.
    public static func < (lhs: MemoryPressureLevel, rhs: MemoryPressureLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The level's name, such as `warning`.
    public var description: String {
        switch self {
        case .normal: "normal"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}
