extension MemoryCache {
    /// The adaptive policy's memory of recent requests: a frequency sketch of key hash values,
    /// the hill climber that sizes the window and the ghosts of evicted entries that are its
    /// evidence, as ``EvictionPolicy/adaptive`` keeps them for the disk tier (here they live as
    /// long as the cache object).
    ///
    /// Its operations are not inlinable (they use the disk policy's package-level types), so
    /// a hit under this policy costs one call more than under the others.
    @usableFromInline
    struct Admission {
        /// The blocked layout: a hit hashes the fingerprint once and touches one cache line of
        /// a table of 16–32 bytes per entry.
        var sketch = FrequencySketch(isBlocked: true)

        /// The climber starts where the disk policy's does, at half the cache: on the
        /// 100 000-request traces of `Benchmarks/POLICIES.md` that met 18 and 17 of 21 targets
        /// (two seeds) where a start at 1 % met 16 and 15.
        @usableFromInline
        init() {}

        /// The window's share of the cache: 0.01 to 0.99.
        @usableFromInline
        var windowShare: Double { sketch.climber.windowShare }

        /// Counts a hit on `fingerprint`.
        @usableFromInline
        mutating func recordHit(_ fingerprint: UInt32) {
            sketch.addOneToBlock(Int64(fingerprint))
            sketch.climber.recordHits(1)
        }

        /// Counts a hit on each of `fingerprints`, as ``recordHit(_:)`` does one by one.
        @usableFromInline
        mutating func recordHits(_ fingerprints: UnsafeBufferPointer<UInt32>) {
            sketch.addOneToBlocks(fingerprints)
            sketch.climber.recordHits(fingerprints.count)
        }

        /// Counts a miss (an insertion) of `fingerprint` in a cache of `entries` entries; ages the
        /// sketch and moves the window when due, as the disk policy does at a write.
        ///
        /// The sketch is widened for `entries` only when the insertion evicts (`widens`), as on
        /// disk: widened while the cache filled, it kept more of the fill's requests and the
        /// climber took longer samples; on the memory replays of `Benchmarks/POLICIES.md` that
        /// cost up to 0.044 (1M loop at 1 %, seed 2) and 0.034 (1M Zipf 0.6 at 10 %).
        @usableFromInline
        mutating func recordMiss(_ fingerprint: UInt32, entries: Int, widens: Bool = true) {
            if widens { sketch.ensureCapacity(forEntries: entries + 1) }
            sketch.add(Int64(fingerprint))
            // The same additions per entry between halvings as on disk, over a table with a
            // quarter of the words per entry.
            sketch.ageIfDue(
                samplesPerWord: EvictionPolicy.adaptiveSamplesPerWord * FrequencySketch.wordsPerEntry
                    / FrequencySketch.blockedWordsPerEntry)
            sketch.recordClimberMiss(Int64(fingerprint))
        }

        /// Sets the horizon of the climber's ghosts for a cache of `costLimit` and `countLimit`
        /// holding `entries` entries; called as an eviction to the limits begins.
        @usableFromInline
        mutating func setRegretLimits(costLimit: Int, countLimit: Int, entries: Int) {
            sketch.regrets.setLimits(capacity: costLimit, countLimit: countLimit, entries: entries)
        }

        /// Remembers the eviction of an entry with `fingerprint` and `cost` from the window
        /// (`isInWindow`) or the main queue: the climber's evidence.
        @usableFromInline
        mutating func rememberEviction(_ fingerprint: UInt32, cost: Int, isInWindow: Bool) {
            sketch.regrets.remember(Int64(fingerprint), size: cost, leaving: isInWindow ? .window : .main)
        }

        /// How many main-queue entries at its tail a won contest has condemned and the
        /// evictions that follow take; zero outside an eviction.
        @usableFromInline
        var condemned = 0

        /// The cost of the entry being stored while eviction makes room for it (it is about to
        /// join the window); zero otherwise.
        @usableFromInline
        var pendingCost = 0

        /// The slot of the entry being stored (filled, not linked) while eviction makes room
        /// for it; `Storage.none` otherwise.
        @usableFromInline
        var pendingSlot = MemoryCache.Storage.none

        /// What the contest of an entry being stored that is alone more than the window's share
        /// decided: nothing yet, into the main queue, or not kept.
        @usableFromInline
        enum Verdict {
            case undecided, admitted, rejected
        }

        @usableFromInline
        var pendingVerdict = Verdict.undecided

        /// How often `fingerprint` was requested lately, as the sketch estimates it.
        @usableFromInline
        func estimate(_ fingerprint: UInt32) -> Int {
            sketch.estimate(Int64(fingerprint))
        }
    }
}

extension MemoryCache.State {
    /// The adaptive policy's next victim.
    ///
    /// While the window (the small queue, kept in LRU order) holds more than its share, its
    /// least recently used entry (the candidate) moves to the main queue if that has room, and
    /// otherwise competes with the main queue's CLOCK victims that would make room for it: if
    /// the sketch estimates more requests per unit of cost for the candidate than for all of
    /// them together, they are evicted (one per call, ``Admission/condemned`` counts the rest)
    /// and the candidate moves; otherwise the candidate is evicted. With the window within its
    /// share, the main queue evicts its CLOCK victim. As the disk policy does, so that a large
    /// candidate cannot push out many entries on the strength of outliving one.
    ///
    /// O(1) amortized, as S3-FIFO: each pass-over in the main queue spends a read recorded by
    /// an earlier hit, and each move empties a place in the window; a contest examines as many
    /// victims as the candidate's cost needs. One call moves at most `maximumFreeMoves` (16)
    /// entries into free room (a cache filled without
    /// eviction holds everything in its window, and its first eviction would otherwise move
    /// nearly all of it under the lock); past that the main queue gives its CLOCK victim, and
    /// the following evictions move the rest.
    @inlinable
    mutating func nextAdaptiveVictim(toCost cost: Int, count: Int) -> Int? {
        let none = MemoryCache.Storage.none
        if storage.admission.condemned > 0 {
            storage.admission.condemned -= 1
            if storage.main.tail != none { return storage.main.tail }
            storage.admission.condemned = 0
        }
        let windowCost = adaptiveWindowCost(of: cost)
        let isCounted = count < Int.max / 2
        let windowCount = isCounted ? adaptiveWindowCount(of: count) : Int.max
        var freeMoves = 0
        while true {
            let small = storage.small
            // An entry being stored is filled but not linked yet (eviction makes room first);
            // it is about to join the window, so its cost and count count there. (Without its
            // cost, a window at its share let each newcomer push main-queue entries out with no
            // contest: 12 of the 1M-request traces' 21 targets met instead of 21.)
            let pending = storage.count - small.count - storage.main.count
            let isOverShare =
                small.cost + storage.admission.pendingCost > windowCost || small.count + pending > windowCount
            let pendingSlot = storage.admission.pendingSlot
            if small.tail == none, isOverShare, pendingSlot != none, storage.main.tail != none,
                storage.admission.pendingVerdict == .undecided
            {
                // The window holds nothing but the entry being stored, and that alone is more
                // than its share: its room must come from the main queue, so it competes with
                // the victims that would give it, as any candidate does (as on disk).
                guard let victims = clockVictims(makingRoomFor: pendingSlot, within: (cost, count)),
                    outweighs(pendingSlot, victims)
                else {
                    storage.admission.pendingVerdict = .rejected
                    return nil
                }
                storage.admission.pendingVerdict = .admitted
                storage.admission.condemned = victims.count - 1
                return storage.main.tail
            }
            guard small.tail != none && (isOverShare || storage.main.tail == none) else {
                return nextClockVictim() ?? (small.tail == none ? nil : small.tail)
            }
            let candidate = small.tail
            let main = storage.main
            let mainLimit = (cost: cost - windowCost, count: isCounted ? count - windowCount : Int.max)
            if main.cost + storage.nodes[candidate].cost <= mainLimit.cost && main.count + 1 <= mainLimit.count {
                guard freeMoves < Self.maximumFreeMoves else { return nextClockVictim() ?? candidate }
                freeMoves += 1
                // Into free room with its reads: they count for the CLOCK (see balanceAdaptiveWindow).
                storage.moveToHeadOfMain(candidate)
                continue
            }
            // Requests per unit of cost, as on disk: the candidate's against the victims' together.
            guard let victims = clockVictims(makingRoomFor: candidate, within: mainLimit),
                outweighs(candidate, victims)
            else { return candidate }
            storage[mark: candidate].frequency = 0
            storage.moveToHeadOfMain(candidate)
            storage.admission.condemned = victims.count - 1
            return storage.main.tail
        }
    }

    /// Whether the window's `candidate` is worth more than `victims`: its estimated requests
    /// per unit of cost against theirs together, as ``EvictionPolicy/adaptive`` weighs them on
    /// disk (the plain sums where costs are zero).
    @inlinable
    func outweighs(_ candidate: Int, _ victims: (count: Int, requests: Int, cost: Int)) -> Bool {
        let node = storage.nodes[candidate]
        let requests = storage.admission.estimate(node.fingerprint)
        guard node.cost > 0, victims.cost > 0 else { return requests > victims.requests }
        return EvictionPolicy.exceedsPerUnit(requests, node.cost, victims.requests, victims.cost)
    }

    /// Finds the main queue's CLOCK victims whose eviction would let `candidate` into a main
    /// queue of at most `limit`, and leaves them as its oldest entries; returns how many they
    /// are, their estimated requests together and their cost, or `nil` if the whole queue would
    /// not do.
    ///
    /// From the tail, an entry that was read goes back to the head with one read fewer (so the
    /// unread entries passed stay together at the tail); at least one victim is taken.
    @inlinable
    mutating func clockVictims(makingRoomFor candidate: Int, within limit: (cost: Int, count: Int))
        -> (count: Int, requests: Int, cost: Int)?
    {
        let none = MemoryCache.Storage.none
        var cost = storage.main.cost + storage.nodes[candidate].cost
        var entries = storage.main.count + 1
        var victims = 0
        var requests = 0
        var victimsCost = 0
        var slot = storage.main.tail
        while slot != none && (cost > limit.cost || entries > limit.count || victims == 0) {
            let node = storage.nodes[slot]
            let newer = storage.links[slot].previous
            let frequency = storage[mark: slot].frequency
            if frequency > 0 {
                storage[mark: slot].frequency = frequency - 1
                storage.moveToFront(slot)
            } else {
                victims += 1
                requests += storage.admission.estimate(node.fingerprint)
                cost -= node.cost
                victimsCost += node.cost
                entries -= 1
            }
            slot = newer
        }
        guard cost <= limit.cost && entries <= limit.count && victims > 0 else { return nil }
        return (victims, requests, victimsCost)
    }

    /// The adaptive window's share of `cost`: the climber's share, but at least what
    /// TinyLFU's window holds (1 %, or 32 entries of the mean cost up to 10 %), as on disk:
    /// a window smaller than many entries admits them without a contest.
    @inlinable
    func adaptiveWindowCost(of cost: Int) -> Int {
        let share = storage.admission.windowShare
        let meanCost = storage.count == 0 ? 0 : storage.totalCost / storage.count
        let floor = max(Int(Double(cost) * 0.01), min(32 * meanCost, Int(Double(cost) * 0.1)))
        return max(1, floor, Int((Double(cost) * share).rounded(.up)))
    }

    /// The adaptive window's share of `count` entries.
    @inlinable
    func adaptiveWindowCount(of count: Int) -> Int {
        max(1, Int((Double(count) * storage.admission.windowShare).rounded(.up)))
    }

    /// The most window entries one eviction, or one insertion, moves into free room in the
    /// main queue.
    @inlinable static var maximumFreeMoves: Int { 16 }

    /// Keeps the adaptive window within its share after `slot` joined it, while no limit is
    /// exceeded: the window's least recently used entries move into free room in the main
    /// queue, at most ``maximumFreeMoves`` of them, as the disk policy does at such a write.
    ///
    /// So a cache that fills without eviction keeps its window at its share (as Caffeine does),
    /// and its first eviction finds a full main queue to contest rather than a window to empty.
    @inlinable
    mutating func balanceAdaptiveWindow(toCost cost: Int, count: Int, sparing slot: Int) {
        let windowCost = adaptiveWindowCost(of: cost)
        let isCounted = count < Int.max / 2
        let windowCount = isCounted ? adaptiveWindowCount(of: count) : Int.max
        for _ in 0..<Self.maximumFreeMoves {
            let small = storage.small
            let candidate = small.tail
            guard candidate != MemoryCache.Storage.none, candidate != slot,
                small.cost > windowCost || small.count > windowCount,
                storage.main.cost + storage.nodes[candidate].cost <= cost - windowCost,
                !isCounted || storage.main.count + 1 <= count - windowCount
            else { return }
            // The entry keeps its reads as CLOCK credit: an entry read while in the window and
            // moved just before a scan would otherwise be the main queue's only unread popular
            // entry, the victim of every contest of the scan, and lost to a sketch collision.
            storage.moveToHeadOfMain(candidate)
        }
    }

    /// The main queue's CLOCK victim, or `nil` when the queue is empty.
    ///
    /// From the tail, entries that were read go back to the head with one read fewer; the first
    /// unread one is the victim.
    @inlinable
    mutating func nextClockVictim() -> Int? {
        let none = MemoryCache.Storage.none
        while storage.main.tail != none {
            let slot = storage.main.tail
            let frequency = storage[mark: slot].frequency
            guard frequency > 0 else { return slot }
            storage[mark: slot].frequency = frequency - 1
            storage.moveToFront(slot)
        }
        return nil
    }
}

extension MemoryCache {
    /// The adaptive policy's window share in the first shard (0.01 before any insertion, and
    /// under other policies).
    ///
    /// For tests and the trace replay.
    package var adaptiveWindowShare: Double { shards[0].withLock { $0.storage.admission.windowShare } }
}
