/// The tier of a ``Cache`` that served a hit.
public enum CacheTier: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The in-memory tier: the value was already decoded.
    case memory
    /// The disk tier: the value was read, decoded, and promoted to memory.
    case disk
    /// The shared tier (``SharedTier``): the value was decoded and stored in both local tiers.
    case shared

    /// `memory` or `disk`.
    public var description: String { rawValue }
}
