/// The evidence of the ``EvictionPolicy/adaptive`` policy's window climber: which queue's
/// evictions the requests that missed regret.
///
/// Every entry the policy evicts leaves a ghost, its fingerprint with the queue it left (the
/// window, or the main queue; a newcomer that lost its contest for the main queue left the
/// window) and that queue's eviction clock, which then advances by the entry's size and by
/// one entry. A miss on a ghost that its queue evicted within the last ``horizonShare`` of
/// the cache (in bytes, and in entries under a count limit) is a regret of that queue: had
/// the queue been that much larger, the request would have hit. ARC weighs its two lists with
/// ghosts in the same way. The climber compares the two queues' regrets, counted on the same
/// requests, at the end of each sample (see ``WindowClimber``): paired evidence, where
/// comparing the hit rates of successive samples could not tell a bursty workload from a
/// better window (see "The photo-app trace" in `Benchmarks/POLICIES.md`).
///
/// Ghosts older than two horizons on their queue's clock are forgotten, oldest first, and
/// each queue keeps at most as many as the cache holds entries (at least
/// ``minimumGhostLimit``), so the ledger's memory stays bounded. It lives in memory only: a
/// reopened cache, or a ``DiskCache`` that reloads a sketch another process wrote, starts with
/// none, and its climber counts no regrets until its evictions leave ghosts again.
///
/// - Complexity: O(1) amortized per eviction and per miss.
package struct RegretLedger: Hashable, Sendable {
    /// The queues a ghost can leave.
    package enum Queue: Int, Hashable, Sendable {
        case window = 0
        case main = 1
    }

    /// The share of the cache's capacity whose evictions a miss may regret: 1/16.
    package static let horizonShare = 16
    /// The fewest ghosts a queue keeps room for, whatever the cache's size.
    package static let minimumGhostLimit = 1024

    /// A queue's eviction clock: bytes and entries evicted from it so far.
    package struct Clock: Hashable, Sendable {
        package var bytes = 0
        package var entries = 0
    }

    private struct Ghost: Hashable, Sendable {
        var fingerprint: Int64
        /// The queue's clock just after the entry left it.
        var stamp: Clock
    }

    /// One queue's ghosts, oldest first (`ghosts[head...]`; the prefix is spent).
    private struct Ghosts: Hashable, Sendable {
        var ghosts: [Ghost] = []
        var head = 0
        var clock = Clock()

        var count: Int { ghosts.count - head }

        mutating func removeOldest() -> Ghost {
            let oldest = ghosts[head]
            head += 1
            if head >= 1024 && head * 2 >= ghosts.count {
                ghosts.removeFirst(head)
                head = 0
            }
            return oldest
        }
    }

    private var queues = [Ghosts(), Ghosts()]
    /// The live ghost of each remembered fingerprint: its queue and stamp (a spent or older
    /// ghost of the same fingerprint in a queue's list is skipped when it is forgotten).
    private var live: [Int64: Mark] = [:]

    private struct Mark: Hashable, Sendable {
        var queue: Queue
        var stamp: Clock
    }

    /// How far back on its queue's clock a ghost still counts as a regret.
    package private(set) var horizon = Clock(bytes: Int.max, entries: Int.max)
    /// The most ghosts each queue keeps.
    package private(set) var ghostLimit = Self.minimumGhostLimit

    /// Regrets of the window's evictions since the climber last took them.
    package private(set) var windowRegrets = 0
    /// Regrets of the main queue's evictions since the climber last took them.
    package private(set) var mainRegrets = 0

    package init() {}

    /// How many ghosts are remembered.
    package var count: Int { live.count }

    /// The clock of `queue`.
    package func clock(of queue: Queue) -> Clock { queues[queue.rawValue].clock }

    /// Sets the horizon for a cache of `capacity` bytes (`Int.max` for none) and `countLimit`
    /// entries (`Int.max` for none) that holds `entries` entries; called as an eviction begins.
    package mutating func setLimits(capacity: Int, countLimit: Int, entries: Int) {
        horizon = Clock(
            bytes: capacity == .max ? .max : max(1, capacity / Self.horizonShare),
            entries: countLimit == .max ? .max : max(1, countLimit / Self.horizonShare))
        ghostLimit = max(Self.minimumGhostLimit, entries)
    }

    /// Remembers the eviction of the entry with `fingerprint` and `size` bytes from `queue`.
    package mutating func remember(_ fingerprint: Int64, size: Int, leaving queue: Queue) {
        var ghosts = queues[queue.rawValue]
        queues[queue.rawValue] = Ghosts()  // moved out and back, so that the list is never copied
        defer { queues[queue.rawValue] = ghosts }
        ghosts.clock.bytes &+= max(0, size)
        ghosts.clock.entries &+= 1
        ghosts.ghosts.append(Ghost(fingerprint: fingerprint, stamp: ghosts.clock))
        live[fingerprint] = Mark(queue: queue, stamp: ghosts.clock)
        while ghosts.count > 0 {
            let oldest = ghosts.ghosts[ghosts.head]
            let age = Self.age(of: oldest.stamp, at: ghosts.clock)
            let isExpired = age.bytes / 2 >= horizon.bytes || age.entries / 2 >= horizon.entries
            guard isExpired || ghosts.count > ghostLimit else { break }
            _ = ghosts.removeOldest()
            if let known = live[oldest.fingerprint], known.queue == queue, known.stamp == oldest.stamp {
                live[oldest.fingerprint] = nil
            }
        }
    }

    /// Counts a miss on `fingerprint`: a regret of the queue that evicted it within the horizon.
    ///
    /// Its ghost is forgotten either way.
    package mutating func recordMiss(of fingerprint: Int64) {
        guard let ghost = live.removeValue(forKey: fingerprint) else { return }
        let age = Self.age(of: ghost.stamp, at: queues[ghost.queue.rawValue].clock)
        guard age.bytes < horizon.bytes, age.entries < horizon.entries else { return }
        switch ghost.queue {
        case .window: windowRegrets += 1
        case .main: mainRegrets += 1
        }
    }

    /// The regrets counted since the last call, which starts counting afresh.
    package mutating func takeRegrets() -> (window: Int, main: Int) {
        defer {
            windowRegrets = 0
            mainRegrets = 0
        }
        return (windowRegrets, mainRegrets)
    }

    private static func age(of stamp: Clock, at clock: Clock) -> Clock {
        Clock(bytes: clock.bytes &- stamp.bytes, entries: clock.entries &- stamp.entries)
    }
}
