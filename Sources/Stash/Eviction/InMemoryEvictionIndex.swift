/// An in-memory `EvictionIndex`, so that the policies DiskCache runs can be replayed over
/// millions of requests in seconds (see `EvictionSimulator`).
///
/// Each queue is an array of (rank, id) in increasing rank order. Ranks only grow, so a
/// re-ranked entry is appended and its old slot becomes stale; stale slots are skipped when
/// read and compacted away once they outnumber live ones.
package struct InMemoryEvictionIndex: EvictionIndex {
    package struct Stored: Hashable {
        package var size: Int
        package var state: PolicyState
        package var fingerprint: Int64
    }

    private struct RankQueue {
        var slots: [(rank: Int64, id: Int64)] = []
        var head = 0
        var live = 0
    }

    package private(set) var stored: [Int64: Stored] = [:]
    package private(set) var evictable: (size: Int, count: Int) = (0, 0)
    /// Ids removed by `evict` since the caller last emptied this list.
    package var evicted: [Int64] = []
    /// The entry being written, which eviction must not touch.
    package var protected: Int64?
    /// Calls of `setState` and `evict`: the row updates and deletes DiskCache would make.
    package private(set) var writes = 0

    private var queues = [RankQueue(), RankQueue()]
    private var queueSizes: [(size: Int, count: Int)] = [(0, 0), (0, 0)]
    private var clock: Int64 = 0
    private var ghosts: [Int64: Int64] = [:]
    private var ghostOrder: [(rank: Int64, fingerprint: Int64)] = []
    private var ghostHead = 0
    private var hand: Int64 = 0
    private var sketch: FrequencySketch?

    package init() {}

    /// Adds or replaces an entry (what DiskCache's upsert does).
    package mutating func upsert(id: Int64, size: Int, state: PolicyState, fingerprint: Int64) {
        remove(id)
        stored[id] = Stored(size: size, state: state, fingerprint: fingerprint)
        place(id, state: state, size: size)
    }

    /// Removes an entry without counting it as an eviction.
    package mutating func remove(_ id: Int64) {
        guard let old = stored.removeValue(forKey: id) else { return }
        unplace(old)
    }

    private mutating func place(_ id: Int64, state: PolicyState, size: Int) {
        queues[state.queue].slots.append((state.rank, id))
        queues[state.queue].live += 1
        queueSizes[state.queue].size += size
        queueSizes[state.queue].count += 1
        evictable.size += size
        evictable.count += 1
    }

    private mutating func unplace(_ old: Stored) {
        queues[old.state.queue].live -= 1
        queueSizes[old.state.queue].size -= old.size
        queueSizes[old.state.queue].count -= 1
        evictable.size -= old.size
        evictable.count -= 1
        compactIfSparse(old.state.queue)
    }

    private func isLive(_ slot: (rank: Int64, id: Int64), in queue: Int) -> Bool {
        guard let entry = stored[slot.id] else { return false }
        return entry.state.queue == queue && entry.state.rank == slot.rank
    }

    private mutating func compactIfSparse(_ queue: Int) {
        let total = queues[queue].slots.count - queues[queue].head
        guard total > 1024, total > 2 * queues[queue].live else { return }
        let slots = queues[queue].slots[queues[queue].head...].filter { isLive($0, in: queue) }
        queues[queue].slots = Array(slots)
        queues[queue].head = 0
    }

    package mutating func entries(inQueue queue: Int, fromRank rank: Int64, limit: Int) throws -> [PolicyEntry] {
        // Stale slots at the front can never become live again: drop them for good.
        while queues[queue].head < queues[queue].slots.count,
            !isLive(queues[queue].slots[queues[queue].head], in: queue)
        {
            queues[queue].head += 1
        }
        let slots = queues[queue].slots
        var low = queues[queue].head
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].rank < rank { low = middle + 1 } else { high = middle }
        }
        var result: [PolicyEntry] = []
        var position = low
        while position < slots.count && result.count < limit {
            let slot = slots[position]
            position += 1
            guard slot.id != protected, isLive(slot, in: queue), let entry = stored[slot.id] else { continue }
            result.append(
                PolicyEntry(id: slot.id, size: entry.size, state: entry.state, fingerprint: entry.fingerprint))
        }
        return result
    }

    package mutating func queueTotals(_ queue: Int) throws -> (size: Int, count: Int) {
        queueSizes[queue]
    }

    package var mayEvictIncoming = true

    package var incoming: PolicyEntry? {
        guard let protected, let entry = stored[protected] else { return nil }
        return PolicyEntry(id: protected, size: entry.size, state: entry.state, fingerprint: entry.fingerprint)
    }

    package mutating func setState(_ state: PolicyState, forEntry id: Int64) throws {
        writes += 1
        guard let old = stored[id] else { return }
        if old.state.queue == state.queue && old.state.rank == state.rank {
            stored[id]!.state.frequency = state.frequency  // its slot stays where it is
            return
        }
        // A new position always has a new, higher rank, so appending keeps each queue sorted.
        unplace(old)
        stored[id]!.state = state
        place(id, state: state, size: old.size)
    }

    package mutating func evict(_ entry: PolicyEntry) throws {
        writes += 1
        remove(entry.id)
        evicted.append(entry.id)
    }

    package mutating func nextRank() throws -> Int64 {
        clock += 1
        return clock
    }

    package mutating func rememberGhost(_ fingerprint: Int64, limit: Int) throws {
        let rank = try nextRank()
        ghosts[fingerprint] = rank
        ghostOrder.append((rank, fingerprint))
        while ghosts.count > limit, ghostHead < ghostOrder.count {
            let oldest = ghostOrder[ghostHead]
            ghostHead += 1
            if ghosts[oldest.fingerprint] == oldest.rank { ghosts[oldest.fingerprint] = nil }
        }
        if ghostHead > 4096 && ghostHead * 2 > ghostOrder.count {
            ghostOrder.removeFirst(ghostHead)
            ghostHead = 0
        }
    }

    package mutating func takeGhost(_ fingerprint: Int64) throws -> Bool {
        ghosts.removeValue(forKey: fingerprint) != nil
    }

    package mutating func cursor() throws -> Int64 { hand }

    package mutating func setCursor(_ rank: Int64) throws { hand = rank }

    package mutating func withFrequencySketch<T>(_ body: (inout FrequencySketch) throws -> T) throws -> T {
        var current = sketch ?? FrequencySketch()
        // Moved out and back so that the table is never copied.
        sketch = nil
        defer { sketch = current }
        return try body(&current)
    }

    /// The frequency sketch, if a policy has used one.
    package var frequencySketch: FrequencySketch? { sketch }

    /// Forgets the adaptive policy's ghosts and regrets, as a DiskCache does when it reopens
    /// (they are never persisted).
    package mutating func forgetRegrets() {
        sketch?.regrets = RegretLedger()
    }
}
