extension MemoryCache {
    /// The adaptive policy's memory of recent requests: a frequency sketch of key hash values and
    /// the hill climber that sizes the window, as ``EvictionPolicy/adaptive`` keeps them on disk
    /// (here they live as long as the cache object).
    ///
    /// Its operations are not inlinable (they use the disk policy's package-level types), so
    /// a hit under this policy costs one call more than under the others.
    @usableFromInline
    struct Admission {
        /// The blocked layout: a hit hashes the fingerprint once and touches one cache line of
        /// a table of 16–32 bytes per entry.
        var sketch = FrequencySketch(isBlocked: true)

        /// The climber starts at the smallest window, where the memory tier's scan resistance
        /// was tested; the disk policy's starts at half the cache.
        @usableFromInline
        init() {
            sketch.climber = WindowClimber(startingAt: WindowClimber.minimumShare)
        }

        /// The window's share of the cache: 0.01 to 0.99.
        @usableFromInline
        var windowShare: Double { sketch.climber.windowShare }

        /// Counts a hit on `fingerprint`.
        @usableFromInline
        mutating func recordHit(_ fingerprint: UInt32) {
            sketch.addOneToBlock(Int64(fingerprint))
            sketch.climber.recordHits(1)
        }

        /// Counts a miss (an insertion) of `fingerprint` in a cache of `entries` entries; ages the
        /// sketch and moves the window when due, as the disk policy does at a write.
        @usableFromInline
        mutating func recordMiss(_ fingerprint: UInt32, entries: Int) {
            sketch.ensureCapacity(forEntries: entries + 1)
            sketch.add(Int64(fingerprint))
            // The same additions per entry between halvings as on disk, over a table with a
            // quarter of the words per entry.
            sketch.ageIfDue(
                samplesPerWord: EvictionPolicy.adaptiveSamplesPerWord * FrequencySketch.wordsPerEntry
                    / FrequencySketch.blockedWordsPerEntry)
            sketch.climber.recordMiss(sampleSize: sketch.climberSampleSize)
        }

        /// Whether the window's oldest entry (`candidate`) was requested more often lately than
        /// the main queue's victim; ties keep the victim.
        @usableFromInline
        func admits(_ candidate: UInt32, over victim: UInt32) -> Bool {
            sketch.estimate(Int64(candidate)) > sketch.estimate(Int64(victim))
        }
    }
}

extension MemoryCache.State {
    /// The adaptive policy's next victim.
    ///
    /// While the window (the small queue, kept in LRU order) holds more than its share, its
    /// least recently used entry moves to the main queue if that has room, and otherwise
    /// competes with the main queue's CLOCK victim: the one requested less often lately is
    /// evicted. With the window within its share, the main queue evicts its CLOCK victim.
    ///
    /// O(1) amortized, as S3-FIFO: each pass-over in the main queue spends a read recorded by
    /// an earlier hit, and each move empties a place in the window. One call moves at most
    /// `maximumFreeMoves` (16) entries into free room (a cache filled without
    /// eviction holds everything in its window, and its first eviction would otherwise move
    /// nearly all of it under the lock); past that the main queue gives its CLOCK victim, and
    /// the following evictions move the rest.
    @inlinable
    mutating func nextAdaptiveVictim(toCost cost: Int, count: Int) -> Int? {
        let none = MemoryCache.Storage.none
        let share = storage.admission.windowShare
        let windowCost = max(1, Int((Double(cost) * share).rounded(.up)))
        let isCounted = count < Int.max / 2
        let windowCount = isCounted ? max(1, Int((Double(count) * share).rounded(.up))) : Int.max
        var freeMoves = 0
        while true {
            let small = storage.small
            // An entry being stored is filled but not linked yet (eviction makes room first);
            // it is about to join the window, so it counts there.
            let pending = storage.count - small.count - storage.main.count
            let isOverShare = small.cost > windowCost || small.count + pending > windowCount
            guard small.tail != none && (isOverShare || storage.main.tail == none) else {
                return nextClockVictim() ?? (small.tail == none ? nil : small.tail)
            }
            let candidate = small.tail
            let main = storage.main
            if main.cost + storage.nodes[candidate].cost <= cost - windowCost
                && (!isCounted || main.count + 1 <= count - windowCount)
            {
                guard freeMoves < Self.maximumFreeMoves else { return nextClockVictim() ?? candidate }
                freeMoves += 1
                // Into free room with its reads: they count for the CLOCK (see balanceAdaptiveWindow).
                storage.moveToHeadOfMain(candidate)
                continue
            }
            guard let victim = nextClockVictim() else { return candidate }
            let candidateFingerprint = storage.nodes[candidate].fingerprint
            guard storage.admission.admits(candidateFingerprint, over: storage.nodes[victim].fingerprint) else {
                return candidate
            }
            storage.nodes[candidate].frequency = 0
            storage.moveToHeadOfMain(candidate)
            return victim
        }
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
        let share = storage.admission.windowShare
        let windowCost = max(1, Int((Double(cost) * share).rounded(.up)))
        let isCounted = count < Int.max / 2
        let windowCount = isCounted ? max(1, Int((Double(count) * share).rounded(.up))) : Int.max
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
            let frequency = storage.nodes[slot].frequency
            guard frequency > 0 else { return slot }
            storage.nodes[slot].frequency = frequency - 1
            storage.moveToFront(slot)
        }
        return nil
    }
}

extension MemoryCache {
    /// The adaptive policy's window share (0.01 before any insertion, and under other policies).
    ///
    /// For tests.
    var adaptiveWindowShare: Double { state.withLock { $0.storage.admission.windowShare } }
}
