/// SIEVE and S3-FIFO, over any `EvictionIndex`.
extension EvictionPolicy {
    /// SIEVE: the hand moves from old to new, clearing visited bits, and evicts the first
    /// unvisited entry; past the newest entry it wraps around to the oldest.
    func evictSieve(from index: inout some EvictionIndex, targetSize: Int, targetCount: Int) throws {
        var hand = try index.cursor()
        var wrapped = false
        while !Self.isSatisfied(index, targetSize, targetCount) {
            let batch = try index.entries(inQueue: 0, fromRank: hand, limit: 64)
            if batch.isEmpty {
                if wrapped || hand == .min { break }
                hand = .min
                wrapped = true
                continue
            }
            wrapped = false
            for entry in batch {
                if Self.isSatisfied(index, targetSize, targetCount) { break }
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
        // A hand past the newest entry points nowhere: the next sweep starts at the oldest, not
        // at entries written after this eviction (the one being written counts as such).
        if hand != .min, try index.entries(inQueue: 0, fromRank: hand, limit: 1).isEmpty {
            hand = .min
        }
        try index.setCursor(hand)
    }

    /// S3-FIFO: evict from the small queue while it holds at least 10 % of the capacity (or the
    /// main queue is empty), otherwise from the main queue; a queue that cannot give up an
    /// entry leaves the turn to the other.
    ///
    /// A textbook S3-FIFO evicts before it inserts; here the entry being written is already in
    /// its queue, so the queues are measured without it, and if it went to the main queue it
    /// moves behind the entries that eviction put back there.
    func evictS3FIFO(from index: inout some EvictionIndex, targetSize: Int, targetCount: Int, capacity: Int) throws {
        let smallTarget = Int(Double(capacity) * Self.smallQueueShare)
        let incoming = index.incoming
        while !Self.isSatisfied(index, targetSize, targetCount) {
            // As a textbook S3-FIFO sees its queues: before the entry being written joins one.
            var small = try index.queueTotals(Self.smallQueue)
            var main = try index.queueTotals(Self.mainQueue)
            if let incoming {
                if incoming.state.queue == Self.smallQueue { small.size -= incoming.size } else { main.count -= 1 }
            }
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
            if !progressed { break }
        }
        if let incoming, incoming.state.queue == Self.mainQueue {
            try requeue(incoming, behindNewerEntriesIn: &index)
        }
    }

    /// Gives `entry` a new rank if any entry of its queue is now newer.
    private func requeue(_ entry: PolicyEntry, behindNewerEntriesIn index: inout some EvictionIndex) throws {
        guard try !index.entries(inQueue: entry.state.queue, fromRank: entry.state.rank &+ 1, limit: 1).isEmpty else {
            return
        }
        var state = entry.state
        state.rank = try index.nextRank()
        try index.setState(state, forEntry: entry.id)
    }

    /// S3-FIFO: the oldest entries of the small queue that were read move to the main queue,
    /// until one that was not is evicted and remembered as a ghost (the ghost queue holds as
    /// many keys as the main queue has entries, at least 64).
    ///
    /// Returns `false` when the small queue emptied without an eviction.
    private func evictFromSmallQueue(of index: inout some EvictionIndex, mainCount: Int) throws -> Bool {
        var mainCount = mainCount
        while let oldest = try index.entries(inQueue: Self.smallQueue, fromRank: .min, limit: 1).first {
            if oldest.state.frequency >= 1 {
                let moved = PolicyState(queue: Self.mainQueue, rank: try index.nextRank(), frequency: 0)
                try index.setState(moved, forEntry: oldest.id)
                mainCount += 1
            } else {
                try index.evict(oldest)
                try index.rememberGhost(oldest.fingerprint, limit: max(mainCount, 64))
                return true
            }
        }
        return false
    }

    /// The main queue of S3-FIFO and TinyLFU is a two-bit CLOCK: a read entry goes around
    /// again with one hit fewer, an unread one is evicted.
    ///
    /// Returns `false` when the main queue holds nothing evictable.
    func evictFromMainQueue(of index: inout some EvictionIndex) throws -> Bool {
        // The queue's oldest entries are read ahead from `cursor` on, one at first, then more
        // at a time while second chances go round: an entry leaves the front only for the back
        // (a second chance) or the cache, and entries join at the back, so this finds what
        // reading the oldest entry again after each second chance would, one read for many
        // second chances (in a cache whose every entry was read since the hand last passed,
        // each eviction first gives many).
        var cursor = Int64.min
        var batchSize = 1
        while true {
            let batch = try index.entries(inQueue: Self.mainQueue, fromRank: cursor, limit: batchSize)
            guard !batch.isEmpty else { return false }
            batchSize = min(2 * batchSize, 16)
            for oldest in batch {
                cursor = oldest.state.rank &+ 1
                guard oldest.state.frequency == 0 else {
                    let again = PolicyState(
                        queue: Self.mainQueue, rank: try index.nextRank(), frequency: oldest.state.frequency - 1)
                    try index.setState(again, forEntry: oldest.id)
                    continue
                }
                try evictRemembering(oldest, from: &index)
                return true
            }
        }
    }

    /// Evicts `entry`; the adaptive policy first remembers it as a ghost of its queue, the
    /// evidence of its window climber (see ``RegretLedger``).
    func evictRemembering(_ entry: PolicyEntry, from index: inout some EvictionIndex) throws {
        if kind == .adaptive {
            try index.withFrequencySketch { sketch in
                let queue: RegretLedger.Queue = entry.state.queue == Self.smallQueue ? .window : .main
                sketch.regrets.remember(entry.fingerprint, size: entry.size, leaving: queue)
            }
        }
        try index.evict(entry)
    }
}
