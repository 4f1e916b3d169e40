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

    /// The most window entries one eviction moves into free room in the main queue.
    ///
    /// A cache filled without eviction would otherwise hold everything in its window, and its
    /// first eviction would move nearly every entry to the main queue (one index update each,
    /// seconds at a million entries); so would the first eviction after the climber shrinks
    /// the window by much. With the bound, an eviction does at most this many such moves and the
    /// writes that follow do the rest (a write that evicts nothing, at most
    /// ``maximumBalanceMoves``, see ``balanceWindow(in:targetSize:targetCount:capacity:)``).
    static let maximumFreeMoves = 16

    /// The most window entries a write that evicts nothing moves into free room in the main
    /// queue.
    ///
    /// One keeps a filling cache's window at its share; two make a window above its share
    /// (after a large entry, or a climber that shrank it) drain; a window far above it (a cache
    /// filled under a much larger limit) drains over many writes. At a million entries each
    /// move is a random page written by the store's commit: with 16 moves per such write a
    /// store into that cache took 4.7 ms, with 2, 1.8 ms (`Benchmarks/POLICIES.md`).
    static let maximumBalanceMoves = 2

    /// The most second chances one write gives in the adaptive policy's window (a CLOCK): after
    /// that, the window's oldest entry is the candidate whether or not it was read.
    static let maximumSecondChances = 32

    /// The window's oldest entry other than the one being written: the candidate for the main
    /// queue.
    ///
    /// The adaptive policy's window is a CLOCK: an oldest entry read since it was last examined
    /// (its bit set) goes round again with its bit cleared, and the next oldest is examined,
    /// while `chances` (spent here) last. TinyLFU's window is a FIFO.
    private func windowCandidate(in index: inout some EvictionIndex, chances: inout Int) throws -> PolicyEntry? {
        while let oldest = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first {
            guard try goesRoundTheWindow(oldest, chances: &chances, in: &index) else { return oldest }
        }
        return nil
    }

    /// Sends the window's oldest entry round the window's CLOCK again if it must, and says so.
    ///
    /// It goes round in the adaptive policy, with its bit set and a chance left: its bit
    /// cleared, at the back of the window. Otherwise it is the candidate for the main queue.
    private func goesRoundTheWindow(
        _ entry: PolicyEntry, chances: inout Int, in index: inout some EvictionIndex
    ) throws -> Bool {
        guard kind == .adaptive, entry.state.frequency > 0, chances > 0 else { return false }
        chances -= 1
        let again = PolicyState(queue: Self.smallQueue, rank: try index.nextRank(), frequency: 0)
        try index.setState(again, forEntry: entry.id)
        return true
    }

    /// The window's and the main queue's bounds for the index's current mean entry size.
    ///
    /// With `widensSketch` (at an eviction), the frequency sketch is first widened for the
    /// index's entries. A write that evicts nothing leaves the sketch as it is: widened while a
    /// cache fills, the sketch kept more of the fill's requests and the climber took longer
    /// samples, which cost the 1M-request photo feed 0.008 at 1 % (`Benchmarks/POLICIES.md`).
    private func queueBounds(
        of index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int, widensSketch: Bool
    ) throws -> (window: (size: Int, count: Int), main: (size: Int, count: Int)) {
        let entries = index.evictable.count
        let share = try index.withFrequencySketch { sketch in
            if widensSketch {
                sketch.ensureCapacity(forEntries: entries)
                if kind == .adaptive {
                    sketch.regrets.setLimits(capacity: capacity, countLimit: targetCount, entries: entries)
                }
            }
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
        return ((windowSize, windowCount), mainLimit)
    }

    /// Keeps the window within its share at a write that exceeds no limit: while the window
    /// holds more than its share and its oldest entry fits in the main queue's free room, that
    /// entry moves to the main queue, at most ``maximumBalanceMoves`` times.
    ///
    /// So a cache that fills without eviction keeps the window at its share, as Caffeine does,
    /// and its first eviction finds the main queue full rather than empty. TinyLFU policies
    /// only; the others do nothing.
    package func balanceWindow(
        in index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int
    ) throws {
        guard usesFrequencySketch else { return }
        let bounds = try queueBounds(
            of: &index, targetSize: targetSize, targetCount: targetCount, capacity: capacity, widensSketch: false)
        var main = try index.queueTotals(Self.mainQueue)
        // Two queues hold every unpinned entry, so the window is what the main queue is not.
        var window = (size: index.evictable.size - main.size, count: index.evictable.count - main.count)
        var moves = 0
        var chances = Self.maximumSecondChances
        // The window's oldest entries, read ahead (the next one last) from `cursor` on: what
        // one read of the oldest entry at a time would find, since an entry leaves the front of
        // the window only for the main queue or the window's back, and entries join at the
        // back. One read for the moves of a write instead of one per move.
        var ahead: [PolicyEntry] = []
        var cursor = Int64.min
        while moves < Self.maximumBalanceMoves, window.size > bounds.window.size || window.count > bounds.window.count,
            main.size < bounds.main.size, main.count < bounds.main.count
        {
            if ahead.isEmpty {
                ahead = try index.entries(
                    inQueue: Self.smallQueue, fromRank: cursor, limit: Self.maximumBalanceMoves - moves
                ).reversed()
            }
            guard let candidate = ahead.popLast() else { return }
            cursor = candidate.state.rank &+ 1
            if try goesRoundTheWindow(candidate, chances: &chances, in: &index) { continue }
            guard main.size + candidate.size <= bounds.main.size else { return }
            let moved = PolicyState(queue: Self.mainQueue, rank: try index.nextRank(), frequency: 0)
            try index.setState(moved, forEntry: candidate.id)
            main = (main.size + candidate.size, main.count + 1)
            window = (window.size - candidate.size, window.count - 1)
            moves += 1
        }
    }

    /// Evicts until the targets are met.
    ///
    /// While the window holds more than its share, its oldest entry (the candidate; in the
    /// adaptive policy's CLOCK window, the oldest not read since it was last examined) goes to
    /// the main queue if that queue has room, and otherwise competes with the entries the main
    /// queue would evict to make room (its CLOCK victims): the side whose requests, as the
    /// frequency sketch estimates them, are worth more under ``Objective`` (in the adaptive
    /// policy, per byte) stays, the other is evicted. Ties keep the incumbents. With the window within its share, the main queue
    /// evicts on its own. After ``maximumFreeMoves`` moves into free room, a candidate that
    /// would move into free room stays in the window for a later write and the main queue
    /// evicts on its own instead (what it would have evicted once the candidates had moved),
    /// and any other candidate must displace victims or be evicted, as if the main queue were
    /// full: the work of one eviction stays bounded by what it evicts, whatever the cache's size.
    func evictWithAdmission(
        from index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int
    ) throws {
        let bounds = try queueBounds(
            of: &index, targetSize: targetSize, targetCount: targetCount, capacity: capacity, widensSketch: true)
        var freeMoves = 0
        var chances = Self.maximumSecondChances
        var isIncomingDecided = false
        while !Self.isSatisfied(index, targetSize, targetCount) {
            let main = try index.queueTotals(Self.mainQueue)
            // Two queues hold every unpinned entry, so the window is what the main queue is not.
            let window = (size: index.evictable.size - main.size, count: index.evictable.count - main.count)
            if window.size > bounds.window.size || window.count > bounds.window.count || main.count == 0,
                let candidate = try windowCandidate(in: &index, chances: &chances)
            {
                let hasFreeRoom = freeMoves < Self.maximumFreeMoves
                let wouldMoveFree = main.size + candidate.size <= bounds.main.size && main.count < bounds.main.count
                if !hasFreeRoom && wouldMoveFree && main.count > 0, try evictFromMainQueue(of: &index) {
                    continue
                }
                if try admitOrEvict(candidate, main: main, mainLimit: bounds.main, freeRoom: hasFreeRoom, in: &index) {
                    freeMoves += 1
                }
                continue
            }
            if kind == .adaptive, !isIncomingDecided, index.mayEvictIncoming, let incoming = index.incoming,
                incoming.state.queue == Self.smallQueue, main.count > 0,
                window.size > bounds.window.size || window.count > bounds.window.count
            {
                // The window holds nothing but the entry being written, and that alone is more
                // than the window's share: its room must come from the main queue, so it
                // competes with the victims that would give it, as any candidate does.
                // An entry larger than the target (a low-water mark below its size) competes with
                // the whole main queue rather than losing for want of room.
                isIncomingDecided = true
                let others = (size: window.size - incoming.size, count: window.count - 1)
                let limit = (
                    size: targetSize == .max ? Int.max : max(incoming.size, targetSize - others.size),
                    count: targetCount == .max ? Int.max : max(1, targetCount - others.count)
                )
                _ = try admitOrEvict(incoming, main: main, mainLimit: limit, freeRoom: true, in: &index)
                continue
            }
            if try evictFromMainQueue(of: &index) { continue }
            // Only the window is left (the main queue holds at most the entry being written).
            guard let oldest = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first else {
                return
            }
            try evictRemembering(oldest, from: &index)
        }
    }

    /// Moves `candidate` from the window to the main queue, evicting the CLOCK victims it
    /// displaces if its estimated worth exceeds theirs; otherwise evicts `candidate`.
    ///
    /// Without `freeRoom`, the main queue counts as full at its current totals (if those are
    /// below `mainLimit`): the candidate must displace at least its own size and count.
    /// Returns whether the candidate moved into free room (displacing nothing).
    private func admitOrEvict(
        _ candidate: PolicyEntry, main: (size: Int, count: Int), mainLimit: (size: Int, count: Int),
        freeRoom: Bool, in index: inout some EvictionIndex
    ) throws -> Bool {
        let limit =
            freeRoom ? mainLimit : (size: min(mainLimit.size, main.size), count: min(mainLimit.count, main.count))
        var size = main.size + candidate.size
        var count = main.count + 1
        var victims: [PolicyEntry] = []
        func fits() -> Bool { size <= limit.size && count <= limit.count && (freeRoom || !victims.isEmpty) }
        var cursor = Int64.min
        // One or two victims usually make the room: read the queue's oldest entries in batches
        // of 2, 4, 8, then 16 (each entry read costs its key's hash; a first batch of 16 was a
        // fifth of a store into a full cache of 10 000 entries, perf).
        var batchSize = 2
        search: while !fits() {
            let batch = try index.entries(inQueue: Self.mainQueue, fromRank: cursor, limit: batchSize)
            batchSize = min(2 * batchSize, 16)
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
                victims.isEmpty || outweighs(candidate, victims, sketch)
            }
            if admitted {
                for victim in victims { try evictRemembering(victim, from: &index) }
                let moved = PolicyState(queue: Self.mainQueue, rank: try index.nextRank(), frequency: 0)
                try index.setState(moved, forEntry: candidate.id)
                return victims.isEmpty
            }
        }
        try evictRemembering(candidate, from: &index)
        return false
    }

    /// Whether keeping `candidate` is worth more than keeping `victims`, whose eviction would
    /// make room for it.
    ///
    /// ``tinyLFU`` compares the candidate's worth with the victims' together. The adaptive
    /// policy compares worth per byte: the candidate's against the victims' together (the
    /// victims' density prices every byte the candidate takes, as GDSF ranks entries by
    /// requests per byte). The two agree where the victims free the candidate's size. They
    /// differ where part of the candidate's room is free in the main queue (the window is over
    /// its share, after a large newcomer or a climber step): with plain sums a large candidate
    /// had only to outweigh the few victims that made up the rest, and a small cache filled up
    /// with a few large entries, each read now and then, instead of many small ones. And where
    /// the last victim is large, freeing more than the candidate needs (room the window's next
    /// candidates take). On the 100 000-request traces of both seeds, both tiers: 77 targets met
    /// of 84 instead of 72, and none lost on the 1M-request ones (`Benchmarks/POLICIES.md`).
    /// Where sizes are zero, the plain sums.
    private func outweighs(_ candidate: PolicyEntry, _ victims: [PolicyEntry], _ sketch: FrequencySketch) -> Bool {
        let victimsWorth = victims.reduce(0) { $0 + worth($1, sketch) }
        let victimsSize = victims.reduce(0) { $0 + $1.size }
        guard kind == .adaptive, candidate.size > 0, victimsSize > 0 else {
            return worth(candidate, sketch) > victimsWorth
        }
        return Self.exceedsPerUnit(worth(candidate, sketch), candidate.size, victimsWorth, victimsSize)
    }

    /// Whether `worth` per `size` exceeds `otherWorth` per `otherSize` (sizes positive), exactly:
    /// the cross products in full width, so that large sizes cannot overflow and ties stay ties.
    @usableFromInline
    static func exceedsPerUnit(_ worth: Int, _ size: Int, _ otherWorth: Int, _ otherSize: Int) -> Bool {
        let left = worth.multipliedFullWidth(by: otherSize)
        let right = otherWorth.multipliedFullWidth(by: size)
        return (left.high, left.low) > (right.high, right.low)
    }

    /// What keeping `entry` is worth: its estimated requests, or bytes of them.
    private func worth(_ entry: PolicyEntry, _ sketch: FrequencySketch) -> Int {
        let requests = sketch.estimate(entry.fingerprint)
        return objective == .byteMissRatio ? requests * entry.size : requests
    }
}
