/// Which unpinned entries a full cache evicts first.
///
/// Every policy keeps its per-entry state (a queue, a rank, a small hit counter) in the
/// cache's index, so it survives reopening, and hits are recorded in memory and written in
/// batches, so a hit never costs a disk write. The same policy code runs inside ``DiskCache``
/// and in the trace simulator that measures it.
public struct EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: String, Hashable, Sendable, CaseIterable {
        case leastRecentlyUsed = "lru"
        case firstInFirstOut = "fifo"
        case sieve = "sieve"
        case s3fifo = "s3-fifo"
    }

    let kind: Kind

    /// Evicts the entry that was read or written longest ago.
    public static let leastRecentlyUsed = EvictionPolicy(kind: .leastRecentlyUsed)
    /// Evicts the entry that was written longest ago; reads do not count.
    public static let firstInFirstOut = EvictionPolicy(kind: .firstInFirstOut)
    /// SIEVE (Zhang et al., NSDI 2024): one FIFO queue with a "visited" bit per entry and a hand
    /// that sweeps from the oldest entry, sparing and clearing visited ones.
    public static let sieve = EvictionPolicy(kind: .sieve)
    /// S3-FIFO (Yang et al., SOSP 2023): new entries wait in a small FIFO queue (10 % of the
    /// bytes); those read again move to the main queue, the others leave quickly and are
    /// remembered in a ghost queue so that a quick return goes straight to the main queue.
    public static let s3fifo = EvictionPolicy(kind: .s3fifo)

    /// Every policy, for comparisons.
    public static let all: [EvictionPolicy] = Kind.allCases.map(EvictionPolicy.init(kind:))

    /// The policy's short name: `lru`, `fifo`, `sieve` or `s3-fifo`.
    public var description: String { kind.rawValue }

    /// The policy with the short name `name` (case-insensitive), or `nil` for an unknown name.
    public init?(name: String) {
        guard let kind = Kind(rawValue: name.lowercased()) else { return nil }
        self.kind = kind
    }

    private init(kind: Kind) { self.kind = kind }

    // MARK: - The algorithm, over any index

    private static let smallQueue = 0
    private static let mainQueue = 1
    private static let maximumFrequency = 3
    private static let smallQueueShare = 0.1

    /// The state of an entry just written.
    ///
    /// `existing` is the state of the value it replaces.
    package func insertionState(
        existing: PolicyState?, fingerprint: Int64, in index: inout some EvictionIndex
    ) throws -> PolicyState {
        switch kind {
        case .leastRecentlyUsed, .firstInFirstOut:
            return PolicyState(queue: 0, rank: try index.nextRank(), frequency: 0)
        case .sieve:
            // An overwrite counts as a visit; a new entry goes to the head unvisited.
            if var state = existing {
                state.frequency = 1
                return state
            }
            return PolicyState(queue: 0, rank: try index.nextRank(), frequency: 0)
        case .s3fifo:
            if var state = existing {
                state.frequency = min(state.frequency + 1, Self.maximumFrequency)
                return state
            }
            let queue = try index.takeGhost(fingerprint) ? Self.mainQueue : Self.smallQueue
            return PolicyState(queue: queue, rank: try index.nextRank(), frequency: 0)
        }
    }

    /// The state of an entry after `hits` reads, or `nil` when reads do not change it.
    package func stateAfterHits(_ state: PolicyState, hits: Int, in index: inout some EvictionIndex) throws
        -> PolicyState?
    {
        var next = state
        switch kind {
        case .leastRecentlyUsed:
            next.rank = try index.nextRank()
        case .firstInFirstOut:
            return nil
        case .sieve:
            next.frequency = 1
        case .s3fifo:
            next.frequency = min(state.frequency + hits, Self.maximumFrequency)
        }
        return next == state ? nil : next
    }

    /// Evicts until the unpinned entries fit `targetSize` and `targetCount`.
    ///
    /// Stops early when nothing is left to evict. `capacity` is the cache's byte limit, which
    /// sizes S3-FIFO's small queue.
    package func evict(
        from index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int
    ) throws {
        func satisfied(_ index: some EvictionIndex) -> Bool {
            Self.isSatisfied(index, targetSize, targetCount)
        }
        switch kind {
        case .leastRecentlyUsed, .firstInFirstOut:
            while !satisfied(index) {
                let batch = try index.entries(inQueue: 0, fromRank: .min, limit: 64)
                if batch.isEmpty { return }
                for entry in batch where !satisfied(index) { try index.evict(entry) }
            }
        case .sieve:
            try evictSieve(from: &index, targetSize: targetSize, targetCount: targetCount)
        case .s3fifo:
            let smallTarget = Int(Double(capacity) * Self.smallQueueShare)
            while !satisfied(index) {
                let small = try index.queueTotals(Self.smallQueue)
                let main = try index.queueTotals(Self.mainQueue)
                // Either queue may hold nothing but the protected entry: then try the other.
                let progressed: Bool
                if small.size >= smallTarget || main.count == 0 {
                    progressed =
                        try evictFromSmallQueue(of: &index, mainCount: main.count)
                        || evictFromMainQueue(of: &index)
                } else {
                    progressed =
                        try evictFromMainQueue(of: &index)
                        || evictFromSmallQueue(of: &index, mainCount: main.count)
                }
                if !progressed { return }
            }
        }
    }

    /// SIEVE: the hand moves from old to new, clearing visited bits, and evicts the first
    /// unvisited entry; at the newest entry it wraps around to the oldest.
    private func evictSieve(from index: inout some EvictionIndex, targetSize: Int, targetCount: Int) throws {
        func satisfied(_ index: some EvictionIndex) -> Bool {
            Self.isSatisfied(index, targetSize, targetCount)
        }
        var hand = try index.cursor()
        var wrapped = false
        while !satisfied(index) {
            let batch = try index.entries(inQueue: 0, fromRank: hand, limit: 64)
            if batch.isEmpty {
                if wrapped || hand == .min { break }
                hand = .min
                wrapped = true
                continue
            }
            wrapped = false
            for entry in batch {
                if satisfied(index) { break }
                if entry.state.frequency > 0 {
                    var cleared = entry.state
                    cleared.frequency = 0
                    try index.setState(cleared, forEntry: entry.id)
                } else {
                    try index.evict(entry)
                }
                hand = entry.state.rank &+ 1
            }
        }
        try index.setCursor(hand)
    }

    private static func isSatisfied(_ index: some EvictionIndex, _ targetSize: Int, _ targetCount: Int) -> Bool {
        index.evictable.size <= targetSize && index.evictable.count <= targetCount
    }

    /// S3-FIFO: the oldest entry of the small queue moves to the main queue if it was read,
    /// otherwise it is evicted and remembered as a ghost.
    private func evictFromSmallQueue(of index: inout some EvictionIndex, mainCount: Int) throws -> Bool {
        guard let oldest = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first else {
            return false
        }
        if oldest.state.frequency >= 1 {
            let moved = PolicyState(queue: Self.mainQueue, rank: try index.nextRank(), frequency: 0)
            try index.setState(moved, forEntry: oldest.id)
        } else {
            try index.evict(oldest)
            try index.rememberGhost(oldest.fingerprint, limit: max(mainCount, 64))
        }
        return true
    }

    /// S3-FIFO: the main queue is a two-bit CLOCK: a read entry goes around again with one
    /// hit fewer, an unread one is evicted.
    private func evictFromMainQueue(of index: inout some EvictionIndex) throws -> Bool {
        while let oldest = try index.entries(inQueue: Self.mainQueue, fromRank: .min, limit: 1).first {
            if oldest.state.frequency > 0 {
                let again = PolicyState(
                    queue: Self.mainQueue, rank: try index.nextRank(), frequency: oldest.state.frequency - 1)
                try index.setState(again, forEntry: oldest.id)
            } else {
                try index.evict(oldest)
                return true
            }
        }
        return false
    }
}
