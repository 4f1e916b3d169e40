/// The evidence of the ``EvictionPolicy/adaptive`` policy's window climber: which queue's
/// evictions the requests that missed regret.
///
/// Every entry the policy evicts leaves a ghost, its fingerprint with the queue it left (the
/// window, or the main queue; a newcomer that lost its contest for the main queue left the
/// window) and that queue's eviction clock, which advances by the entry's size and by one
/// entry. A miss on a ghost that its queue evicted within the last ``horizonShare``th of the
/// cache (in bytes, and in entries under a count limit) is a regret of that queue: had the
/// queue been that much larger, the request would have hit. ARC weighs its two lists with
/// ghosts in the same way. The climber compares the two queues' regrets, counted on the same
/// requests, at the end of each sample (see ``WindowClimber``): paired evidence, where
/// comparing the hit rates of successive samples could not tell a bursty workload from a
/// better window (see "The photo-app trace" in `Benchmarks/POLICIES.md`).
///
/// The ghosts live in a table of two-slot buckets, 32 bytes a slot: a new ghost takes the slot
/// of a ghost beyond the horizon (which no longer counts) when its bucket is full, or else the
/// older one's. The table grows with the ghosts written, four slots for each (at least
/// ``minimumSlots``), up to one slot per two cached entries: the horizons hold about one ghost
/// per eight cached entries, so at most about a quarter of the slots hold current ghosts, and
/// few are lost to a full bucket. Allocated at one slot per two entries at the first eviction,
/// as before, the table of a cache of a million entries took 16 MiB at once, whose zeroing
/// and page faults were a tenth of the first 5 000 stores into that full cache (perf).
///
/// The table lives in memory only: a reopened cache starts with none, and its climber counts
/// no regrets until its evictions leave ghosts again. A ``DiskCache`` that reloads a sketch
/// another process wrote keeps its own ghosts (they name keys it evicted; the other
/// process's evictions leave ghosts only there).
///
/// - Complexity: O(1) per eviction and per miss (amortized over the table's growth).
package struct RegretLedger: Hashable, Sendable {
    /// The queues a ghost can leave.
    package enum Queue: UInt8, Hashable, Sendable {
        case window = 0
        case main = 1
    }

    /// The horizon's share of the cache's capacity: 1/16.
    package static let horizonShare = 16
    /// The fewest slots of the table, whatever the cache's size.
    package static let minimumSlots = 1024

    /// A queue's eviction clock: bytes and entries evicted from it so far.
    package struct Clock: Hashable, Sendable {
        package var bytes = 0
        package var entries = 0
    }

    private struct Slot: Hashable, Sendable {
        var fingerprint: Int64 = 0
        /// The queue's clock just after the entry left it.
        var stamp = Clock()
        /// When the ghost was written, counted in ghosts (wrapping); 0 for an empty slot.
        var serial: UInt32 = 0
        var queue = Queue.window
    }

    /// The table, allocated at the first eviction (a policy that never evicts, or one that is
    /// not adaptive, costs nothing).
    private var slots: [Slot] = []
    /// The most slots the table may grow to: one per two of the entries the last
    /// ``setLimits`` named (a power of two, at least ``minimumSlots``).
    private var maximumSlots = RegretLedger.minimumSlots
    /// Ghosts written so far (counting stops at 2^40).
    private var ghostsWritten = 0
    /// `64 - log2(buckets)`: the shift that takes a bucket from a mixed fingerprint's top bits.
    private var bucketShift = 64
    private var windowClock = Clock()
    private var mainClock = Clock()
    private var serial: UInt32 = 0

    /// How far back on its queue's clock a ghost still counts as a regret.
    package private(set) var horizon = Clock(bytes: Int.max, entries: Int.max)

    /// Regrets of the window's evictions since the climber last took them.
    package private(set) var windowRegrets = 0
    /// Regrets of the main queue's evictions since the climber last took them.
    package private(set) var mainRegrets = 0

    package init() {}

    /// The slots of the table.
    package var capacity: Int { slots.count }

    /// How many ghosts would count as a regret now (a scan of the table: for tests and
    /// diagnostics).
    package var count: Int {
        slots.filter { $0.serial != 0 && isWithinHorizon($0) }.count
    }

    /// The clock of `queue`.
    package func clock(of queue: Queue) -> Clock { queue == .window ? windowClock : mainClock }

    /// Sets the horizon for a cache of `capacity` bytes (`Int.max` for none) and `countLimit`
    /// entries (`Int.max` for none) that holds `entries` entries, and lets the table grow to one
    /// slot per two of them; called as an eviction begins.
    package mutating func setLimits(capacity: Int, countLimit: Int, entries: Int) {
        horizon = Clock(
            bytes: capacity == .max ? .max : max(1, capacity / Self.horizonShare),
            entries: countLimit == .max ? .max : max(1, countLimit / Self.horizonShare))
        var maximum = Self.minimumSlots
        while maximum < min(entries, 1 << 40) / 2 { maximum *= 2 }
        maximumSlots = max(maximumSlots, maximum)
        reserve()
    }

    /// Widens the table to four slots per ghost written (at least ``minimumSlots``, at most
    /// `maximumSlots`), keeping its ghosts.
    private mutating func reserve() {
        let wanted = min(maximumSlots, max(Self.minimumSlots, ghostsWritten * 4))
        guard wanted > slots.count else { return }
        var count = max(slots.count, 1)
        while count < wanted { count *= 2 }
        // Oldest first, so that where two ghosts meet in a full bucket the newer ones stay.
        let ghosts = slots.filter { $0.serial != 0 }.sorted { serial &- $0.serial > serial &- $1.serial }
        slots = [Slot](repeating: Slot(), count: count)
        bucketShift = 64 - (count / 2).trailingZeroBitCount
        for ghost in ghosts { slots[slotIndex(forNew: ghost.fingerprint)] = ghost }
    }

    /// Remembers the eviction of the entry with `fingerprint` and `size` bytes from `queue`.
    package mutating func remember(_ fingerprint: Int64, size: Int, leaving queue: Queue) {
        let stamp: Clock
        switch queue {
        case .window:
            windowClock.bytes &+= max(0, size)
            windowClock.entries &+= 1
            stamp = windowClock
        case .main:
            mainClock.bytes &+= max(0, size)
            mainClock.entries &+= 1
            stamp = mainClock
        }
        serial &+= 1
        if serial == 0 { serial = 1 }
        if ghostsWritten < 1 << 40 { ghostsWritten += 1 }
        if ghostsWritten * 4 > slots.count && slots.count < maximumSlots { reserve() }
        slots[slotIndex(forNew: fingerprint)] = Slot(
            fingerprint: fingerprint, stamp: stamp, serial: serial, queue: queue)
    }

    /// Counts a miss on `fingerprint`: a regret of the queue that evicted it within the horizon.
    ///
    /// Its ghost is forgotten either way.
    package mutating func recordMiss(of fingerprint: Int64) {
        guard !slots.isEmpty else { return }
        let first = bucket(of: fingerprint)
        for index in first...first + 1 where slots[index].serial != 0 && slots[index].fingerprint == fingerprint {
            let ghost = slots[index]
            slots[index].serial = 0
            guard isWithinHorizon(ghost) else { return }
            switch ghost.queue {
            case .window: windowRegrets += 1
            case .main: mainRegrets += 1
            }
            return
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

    private func isWithinHorizon(_ ghost: Slot) -> Bool {
        let clock = clock(of: ghost.queue)
        return clock.bytes &- ghost.stamp.bytes < horizon.bytes
            && clock.entries &- ghost.stamp.entries < horizon.entries
    }

    /// The first slot of `fingerprint`'s bucket (a Fibonacci hash of its bits).
    private func bucket(of fingerprint: Int64) -> Int {
        let mixed = UInt64(bitPattern: fingerprint) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(bucketShift)) * 2
    }

    /// The slot a new ghost of `fingerprint` takes: the one its older ghost holds, an empty
    /// one, one whose ghost is beyond the horizon, or the older of the two.
    private func slotIndex(forNew fingerprint: Int64) -> Int {
        let first = bucket(of: fingerprint)
        let (a, b) = (slots[first], slots[first + 1])
        if a.serial != 0 && a.fingerprint == fingerprint { return first }
        if b.serial != 0 && b.fingerprint == fingerprint { return first + 1 }
        if a.serial == 0 { return first }
        if b.serial == 0 { return first + 1 }
        let (isCurrentA, isCurrentB) = (isWithinHorizon(a), isWithinHorizon(b))
        if isCurrentA != isCurrentB { return isCurrentA ? first + 1 : first }
        // Wrapping ages: the older ghost has the larger distance to the newest serial.
        return serial &- a.serial >= serial &- b.serial ? first : first + 1
    }
}
