/// Which unpinned entries a full cache evicts first.
///
/// Every entry carries a *rank* in the index; eviction removes the lowest ranks first. A
/// policy decides the rank a new entry gets and whether a hit raises it. Hits are recorded
/// in memory and written in batches, so a hit never costs a disk write.
public struct EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: String, Hashable, Sendable {
        case leastRecentlyUsed = "lru"
        case firstInFirstOut = "fifo"
    }

    private let kind: Kind

    /// Evicts the entry that was read or written longest ago (the default).
    public static let leastRecentlyUsed = EvictionPolicy(kind: .leastRecentlyUsed)
    /// Evicts the entry that was written longest ago; reads do not count.
    public static let firstInFirstOut = EvictionPolicy(kind: .firstInFirstOut)

    /// Whether a hit moves the entry to the back of the eviction queue.
    var promotesOnAccess: Bool { kind == .leastRecentlyUsed }

    /// The policy's short name: `lru` or `fifo`.
    public var description: String { kind.rawValue }

    /// The policy named `lru` or `fifo`, or `nil` for an unknown name.
    public init?(name: String) {
        guard let kind = Kind(rawValue: name.lowercased()) else { return nil }
        self.kind = kind
    }

    private init(kind: Kind) { self.kind = kind }
}
