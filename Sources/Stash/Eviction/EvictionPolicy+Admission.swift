/// TinyLFU: a window queue in front of a CLOCK main queue, with admission by estimated frequency.
extension EvictionPolicy {
    /// The window holds 1 % of the cache, as in W-TinyLFU, or `windowEntries` entries of the
    /// mean size if that is more, but at most 10 %.
    ///
    /// An entry larger than the window takes its room from the main queue without a contest
    /// (nothing else can give way while it is being written). With lognormal sizes and a small
    /// cache, a 1 % window was smaller than many entries, and these uncontested evictions cost
    /// more misses than a larger window costs elsewhere (see `Benchmarks/POLICIES.md`).
    static func windowSize(of total: Int, meanEntry: Int) -> Int {
        max(Int(Double(total) * 0.01), min(windowEntries * meanEntry, Int(Double(total) * 0.1)))
    }

    static let windowEntries = 32

    /// Evicts until the targets are met.
    ///
    /// While the window holds more than its share, its oldest entry (the candidate) goes to the
    /// main queue if that queue has room, and otherwise competes with the entries the main
    /// queue would evict to make room (its CLOCK victims): the side whose requests, as the
    /// frequency sketch estimates them, are worth more under ``Objective`` stays, the other is
    /// evicted. Ties keep the incumbents. With the window within its share, the main queue
    /// evicts on its own.
    func evictWithAdmission(
        from index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int
    ) throws {
        let entries = index.evictable.count
        let share = try index.withFrequencySketch { sketch in
            sketch.ensureCapacity(forEntries: entries)
            return kind == .adaptive ? sketch.climber.windowShare : 0
        }
        let windowSize = max(
            Self.windowSize(of: capacity, meanEntry: entries == 0 ? 0 : index.evictable.size / entries),
            Int(Double(capacity) * share))
        let windowCount =
            targetCount == .max
            ? Int.max : max(Self.windowSize(of: targetCount, meanEntry: 1), Int(Double(targetCount) * share))
        let mainLimit = (
            size: max(0, targetSize - windowSize),
            count: targetCount == .max ? Int.max : max(0, targetCount - windowCount)
        )
        while !Self.isSatisfied(index, targetSize, targetCount) {
            let window = try index.queueTotals(Self.smallQueue)
            let main = try index.queueTotals(Self.mainQueue)
            if window.size > windowSize || window.count > windowCount || main.count == 0,
                let candidate = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first
            {
                try admitOrEvict(candidate, main: main, mainLimit: mainLimit, in: &index)
                continue
            }
            if try evictFromMainQueue(of: &index) { continue }
            // Only the window is left (the main queue holds at most the entry being written).
            guard let oldest = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first else {
                return
            }
            try index.evict(oldest)
        }
    }

    /// Moves `candidate` from the window to the main queue, evicting the CLOCK victims it
    /// displaces if its estimated worth exceeds theirs; otherwise evicts `candidate`.
    private func admitOrEvict(
        _ candidate: PolicyEntry, main: (size: Int, count: Int), mainLimit: (size: Int, count: Int),
        in index: inout some EvictionIndex
    ) throws {
        var size = main.size + candidate.size
        var count = main.count + 1
        func fits() -> Bool { size <= mainLimit.size && count <= mainLimit.count }
        var victims: [PolicyEntry] = []
        var cursor = Int64.min
        search: while !fits() {
            let batch = try index.entries(inQueue: Self.mainQueue, fromRank: cursor, limit: 16)
            if batch.isEmpty { break }
            for entry in batch {
                cursor = entry.state.rank &+ 1
                if entry.state.frequency > 0 {
                    // CLOCK: a read entry goes around again with one hit fewer.
                    let again = PolicyState(
                        queue: Self.mainQueue, rank: try index.nextRank(), frequency: entry.state.frequency - 1)
                    try index.setState(again, forEntry: entry.id)
                    continue
                }
                victims.append(entry)
                size -= entry.size
                count -= 1
                if fits() { break search }
            }
        }
        if fits() {
            // Free room needs no contest; a contest needs the candidate to be worth more.
            let admitted = try index.withFrequencySketch { sketch in
                victims.isEmpty || worth(candidate, sketch) > victims.reduce(0) { $0 + worth($1, sketch) }
            }
            if admitted {
                for victim in victims { try index.evict(victim) }
                let moved = PolicyState(queue: Self.mainQueue, rank: try index.nextRank(), frequency: 0)
                try index.setState(moved, forEntry: candidate.id)
                return
            }
        }
        try index.evict(candidate)
    }

    /// What keeping `entry` is worth: its estimated requests, or bytes of them.
    private func worth(_ entry: PolicyEntry, _ sketch: FrequencySketch) -> Int {
        let requests = sketch.estimate(entry.fingerprint)
        return objective == .byteMissRatio ? requests * entry.size : requests
    }
}
