/// Which unpinned entries a full cache evicts first.
///
/// Every policy keeps its per-entry state (a queue, a rank, a small hit counter) in the
/// cache's index, so it survives reopening, and hits are recorded in memory and written in
/// batches, so a hit never costs a disk write. The same policy code runs inside ``DiskCache``
/// and in the trace simulator that measures it.
///
/// ``adaptive`` is the default: ``tinyLFU`` with a window that a hill climber sizes to the
/// workload. On the eight standard traces of `Benchmarks/POLICIES.md` (Zipf popularity, a
/// photo feed read newest first, a bursty photo app, a loop, a popularity shift; a million
/// requests each) its object miss ratio is within 0.02 of the best of libCacheSim's practical
/// policies at the same capacity. ``tinyLFU`` with its fixed 1 % window misses a little less
/// on stationary Zipf traffic but far more on recency-heavy traffic.
public struct EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: String, Hashable, Sendable, CaseIterable {
        case leastRecentlyUsed = "lru"
        case firstInFirstOut = "fifo"
        case sieve = "sieve"
        case s3fifo = "s3-fifo"
        case tinyLFU = "tinylfu"
        case adaptive = "adaptive"
    }

    /// What a policy that weighs entries of different sizes tries to minimise.
    public enum Objective: String, Sendable, Hashable, CaseIterable {
        /// Fewer misses, whatever their size: each miss is one download to wait for (the default).
        ///
        /// A large entry must be worth as many hits as all the small entries it would displace.
        case objectMissRatio
        /// Fewer missed bytes: each miss costs its size in bandwidth.
        ///
        /// A large entry must be worth as many bytes of hits as the entries it would displace.
        case byteMissRatio
    }

    let kind: Kind
    /// What the policy minimises.
    ///
    /// Only ``tinyLFU`` weighs sizes; the other policies ignore it.
    public let objective: Objective

    /// Evicts the entry that was read or written longest ago.
    public static let leastRecentlyUsed = EvictionPolicy(kind: .leastRecentlyUsed)
    /// Evicts the entry that was written longest ago; reads do not count.
    public static let firstInFirstOut = EvictionPolicy(kind: .firstInFirstOut)
    /// SIEVE (Zhang et al., NSDI 2024): one FIFO queue with a "visited" bit per entry and a hand
    /// that sweeps from the oldest entry towards the newest, sparing and clearing visited ones.
    public static let sieve = EvictionPolicy(kind: .sieve)
    /// S3-FIFO (Yang et al., SOSP 2023): new entries wait in a small FIFO queue (10 % of the
    /// bytes); those read again move to the main queue, the others leave quickly and are
    /// remembered in a ghost queue so that a quick return goes straight to the main queue.
    public static let s3fifo = EvictionPolicy(kind: .s3fifo)
    /// A frequency-based admission filter in the spirit of W-TinyLFU (Einziger et al., 2017).
    ///
    /// Minimises the object miss ratio. New entries enter a small window
    /// queue (1 % of the bytes, or 32 entries of the mean size if that is more). When the
    /// window is full, its oldest entry may join the main queue (a CLOCK with a 2-bit hit
    /// counter) only by displacing main-queue entries that were requested less often, as a
    /// 4-bit count-min sketch of recent requests estimates (64 to 128 bytes per entry, kept in
    /// the index and written with batched hits). Otherwise it is evicted: a key requested once
    /// cannot push out a popular one. See `Benchmarks/POLICIES.md` for the measurements.
    public static let tinyLFU = EvictionPolicy(kind: .tinyLFU)

    /// ``tinyLFU`` whose window adapts to the workload: the default policy.
    ///
    /// The admission filter of ``tinyLFU`` protects popular entries from one-off requests,
    /// which is what frequency-heavy workloads (Zipf popularity, loops larger than the cache)
    /// need, but it turns away newcomers that recency-heavy workloads (a feed read newest
    /// first) read again soon after. So, as in Caffeine's adaptive W-TinyLFU, a hill climber
    /// resizes the window once per sample of requests (two per cached entry): from 1 % of the
    /// cache, where the filter decides nearly everything, up to 99 %, where the cache is nearly
    /// an LRU (the window is a CLOCK: an entry read since it last reached the window's oldest
    /// end goes round again) that still keeps what the sketch says is popular. Its evidence is
    /// ARC's: a miss on an entry that a queue evicted lately is a regret of that queue, and the
    /// window moves towards the queue that is regretted more (see `RegretLedger`). A window
    /// entry joins the main queue only if it was requested more often per byte than the entries
    /// it displaces, together, so that a small cache does not fill up with a few large entries.
    /// So does the entry being written when it alone is more than the window (no other window
    /// entry can give way for it): if it loses, it is evicted at once, as W-TinyLFU turns a
    /// newcomer away, and the entries it would have displaced stay. The climber's state (the
    /// share, the step, the last sampled hit rate) is persisted with the frequency sketch,
    /// shared by the processes that open the cache as the sketch is, and changes only at
    /// writes, so batched hits change no decision; its regrets are gathered in memory by each
    /// cache object. See `Benchmarks/POLICIES.md`.
    public static let adaptive = EvictionPolicy(kind: .adaptive)

    /// ``tinyLFU`` minimising `objective` instead of the object miss ratio.
    public static func tinyLFU(objective: Objective) -> EvictionPolicy {
        EvictionPolicy(kind: .tinyLFU, objective: objective)
    }

    /// Every policy, for comparisons.
    public static let all: [EvictionPolicy] =
        Kind.allCases.map { EvictionPolicy(kind: $0) } + [.tinyLFU(objective: .byteMissRatio)]

    /// The policy's short name: `lru`, `fifo`, `sieve`, `s3-fifo`, `tinylfu`, `adaptive` or
    /// `tinylfu-bytes`.
    public var description: String {
        objective == .byteMissRatio ? kind.rawValue + "-bytes" : kind.rawValue
    }

    /// One line saying which entries the policy gives up first, for tools and logs.
    public var summary: String {
        switch kind {
        case .leastRecentlyUsed: "least recently used first"
        case .firstInFirstOut: "oldest written first; reads do not count"
        case .sieve: "SIEVE: entries not read since the last sweep first, sweeping from the oldest"
        case .s3fifo: "S3-FIFO: new entries that are not read again leave first"
        case .tinyLFU:
            objective == .byteMissRatio
                ? "TinyLFU by bytes: a newcomer stays only if worth more requested bytes than what it displaces"
                : "TinyLFU: a newcomer stays only if requested more often than the entries it displaces"
        case .adaptive:
            "adaptive TinyLFU: a window sized to the workload, then a newcomer stays only if requested more often"
        }
    }

    /// The policy with the short name `name` (case-insensitive), or `nil` for an unknown name.
    public init?(name: String) {
        guard let policy = Self.all.first(where: { $0.description == name.lowercased() }) else { return nil }
        self = policy
    }

    private init(kind: Kind, objective: Objective = .objectMissRatio) {
        self.kind = kind
        self.objective = kind == .tinyLFU ? objective : .objectMissRatio
    }

    // MARK: - The algorithm, over any index

    static let smallQueue = 0
    static let mainQueue = 1
    static let maximumFrequency = 3
    static let smallQueueShare = 0.1
    /// The adaptive policy halves its sketch four times as often as ``tinyLFU``: popularity that
    /// moved on is forgotten within a few passes over the cache rather than a few dozen (on the
    /// popularity-shift trace of `Benchmarks/POLICIES.md` this is worth 0.03 at 10 %).
    static let adaptiveSamplesPerWord = 2

    /// Whether the policy keeps a frequency sketch in the index.
    package var usesFrequencySketch: Bool { kind == .tinyLFU || kind == .adaptive }

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
        case .tinyLFU, .adaptive:
            // A write is a request too. Aging (and the climber's step) happens only here (and
            // growth only in `evict`), at a point a replay and DiskCache share, however late
            // DiskCache adds its hits.
            let adapts = kind == .adaptive
            try index.withFrequencySketch { sketch in
                sketch.add(fingerprint)
                sketch.ageIfDue(samplesPerWord: adapts ? Self.adaptiveSamplesPerWord : FrequencySketch.samplesPerWord)
                if adapts { sketch.recordClimberMiss(fingerprint) }
            }
            if var state = existing {
                state.frequency = min(state.frequency + 1, Self.maximumFrequency)
                return state
            }
            return PolicyState(queue: Self.smallQueue, rank: try index.nextRank(), frequency: 0)
        }
    }

    /// The state of an entry after `hits` reads, or `nil` when reads do not change it.
    package func stateAfterHits(
        _ state: PolicyState, hits: Int, fingerprint: Int64, in index: inout some EvictionIndex
    ) throws -> PolicyState? {
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
        case .tinyLFU, .adaptive:
            let adapts = kind == .adaptive
            try index.withFrequencySketch { sketch in
                sketch.add(fingerprint, count: hits)
                if adapts { sketch.climber.recordHits(hits) }
            }
            if adapts && state.queue == Self.smallQueue {
                // The adaptive window is a CLOCK: a read sets the entry's reference bit, and
                // the window's oldest entry goes round again if its bit is set (see
                // `windowCandidate`). Where the climber opens the window wide (recency-heavy
                // workloads), the cache then keeps what was read lately, nearly as LRU does,
                // while a read writes at most one bit per pass.
                next.frequency = min(state.frequency + hits, 1)
            } else {
                next.frequency = min(state.frequency + hits, Self.maximumFrequency)
            }
        }
        return next == state ? nil : next
    }

    /// Evicts until the unpinned entries fit `targetSize` and `targetCount`.
    ///
    /// Stops early when nothing is left to evict. `capacity` is the cache's byte limit, which
    /// sizes S3-FIFO's small queue and TinyLFU's window.
    package func evict(
        from index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int
    ) throws {
        switch kind {
        case .leastRecentlyUsed, .firstInFirstOut:
            while !Self.isSatisfied(index, targetSize, targetCount) {
                let batch = try index.entries(inQueue: 0, fromRank: .min, limit: 64)
                if batch.isEmpty { return }
                for entry in batch where !Self.isSatisfied(index, targetSize, targetCount) {
                    try index.evict(entry)
                }
            }
        case .sieve:
            try evictSieve(from: &index, targetSize: targetSize, targetCount: targetCount)
        case .s3fifo:
            try evictS3FIFO(from: &index, targetSize: targetSize, targetCount: targetCount, capacity: capacity)
        case .tinyLFU, .adaptive:
            try evictWithAdmission(from: &index, targetSize: targetSize, targetCount: targetCount, capacity: capacity)
        }
    }

    static func isSatisfied(_ index: some EvictionIndex, _ targetSize: Int, _ targetCount: Int) -> Bool {
        index.evictable.size <= targetSize && index.evictable.count <= targetCount
    }
}
