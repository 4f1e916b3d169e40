import CStashVFS

// Where the eviction policy decides. Each function switches over ``MemoryEvictionPolicy``;
// the per-entry bits (SIEVE's visited bit, S3-FIFO's counter) live in the slot's `Mark`, and
// the per-cache state (SIEVE's hand, S3-FIFO's small queue and ghosts) on `Storage`.
extension MemoryCache.State {
    /// The most S3-FIFO's read counter counts: two bits' worth.
    @inlinable static var maximumFrequency: UInt8 { 3 }

    /// How many hits LRU and the adaptive policy buffer before the policy catches up with them.
    ///
    /// Large enough that catching up is a tight loop whose cache misses overlap, small enough
    /// that the buffer stays in one or two cache lines' worth of reads.
    @inlinable static var pendingHitLimit: Int { 64 }

    /// Records a hit on `slot`: a bit or a counter, as Caffeine's read buffer does for the rest.
    ///
    /// SIEVE and S3-FIFO write their bit or counter, and only when it changes, so that the hits
    /// on a popular entry leave its node alone. LRU appends the slot to
    /// ``Storage/pendingSlots``; the adaptive policy (whose window is an LRU queue and whose
    /// sketch counts hits) bumps its CLOCK counter at once and buffers the key's fingerprint,
    /// and the slot too if the entry is in the window. The policy replays the buffer in order,
    /// in ``catchUp()``, when it is full and before anything else reads or changes the order, so
    /// every decision is the one the hits would have made one by one.
    ///
    /// `hash` is the key's hash value, the adaptive policy's fingerprint; whether the entry is
    /// in the window is kept in its ``Mark``, so that the hit does not read the entry's node.
    @inlinable @inline(__always)
    mutating func recordHit(_ slot: Int, hash: Int) {
        switch policy.kind {
        case .leastRecentlyUsed:
            bufferHit(slot)
        case .sieve:
            if storage[mark: slot].frequency == 0 { storage[mark: slot].frequency = 1 }
        case .s3fifo:
            if storage[mark: slot].frequency < Self.maximumFrequency { storage[mark: slot].frequency += 1 }
        case .adaptive:
            let mark = storage[mark: slot]
            if mark.frequency < Self.maximumFrequency { storage[mark: slot].frequency = mark.frequency + 1 }
            bufferAdaptiveHit(slot, isInWindow: mark.isInSmallQueue, fingerprint: UInt32(truncatingIfNeeded: hash))
        }
    }

    /// Buffers an LRU hit.
    @inlinable @inline(__always)
    mutating func bufferHit(_ slot: Int) {
        if pendingCount == Self.pendingHitLimit { replayHits() }
        storage.pendingSlots[pendingCount] = slot
        pendingCount += 1
    }

    /// Buffers an adaptive hit: its fingerprint for the sketch and, if the entry is in the
    /// window, its slot for the window's order.
    ///
    /// Whether the entry is in the window is read here, from the mark the hit has just read:
    /// it cannot change before the replay, since every operation that moves an entry between
    /// the queues catches up first.
    @inlinable @inline(__always)
    mutating func bufferAdaptiveHit(_ slot: Int, isInWindow: Bool, fingerprint: UInt32) {
        if pendingCount == Self.pendingHitLimit { replayHits() }
        if isInWindow {
            storage.pendingSlots[pendingWindowCount] = slot
            pendingWindowCount += 1
        }
        storage.pendingFingerprints[pendingCount] = fingerprint
        pendingCount += 1
    }

    /// Replays the buffered hits, oldest first (LRU moves each entry to the front, the adaptive
    /// policy moves window entries to the window's front and counts each hit in its sketch),
    /// and turns the slots of hits waiting for a ``Cache``'s disk tier into keys.
    ///
    /// Called before every operation that reads or changes the order, evicts or removes, so no
    /// buffered slot is ever stale. O(k) for k buffered hits, each paid for by its hit.
    @inlinable
    mutating func catchUp() {
        if pendingCount > 0 { replayHits() }
        if !reportedSlots.isEmpty { keepReportedKeys() }
    }

    /// Replays the buffered hits: the first half of ``catchUp()``.
    @inlinable
    mutating func replayHits() {
        let count = pendingCount
        pendingCount = 0
        switch policy.kind {
        case .leastRecentlyUsed:
            var head = storage.main.head
            var tail = storage.main.tail
            let slots = storage.pendingSlots
            storage.links.withUnsafeMutableBufferPointer { links in
                replayMovesToFront(
                    ofLinks: UnsafeMutableRawPointer(links.baseAddress!), slots, count, head: &head, tail: &tail)
            }
            storage.main.head = head
            storage.main.tail = tail
        case .adaptive:
            // The window's order and the sketch's counts do not depend on each other: each is
            // brought up to date on its own, the sketch in one call, the window's hits as LRU's.
            let slots = storage.pendingSlots
            let windowHits = pendingWindowCount
            pendingWindowCount = 0
            if windowHits > 0 {
                var head = storage.small.head
                var tail = storage.small.tail
                storage.links.withUnsafeMutableBufferPointer { links in
                    replayMovesToFront(
                        ofLinks: UnsafeMutableRawPointer(links.baseAddress!), slots, windowHits, head: &head,
                        tail: &tail)
                }
                storage.small.head = head
                storage.small.tail = tail
            }
            storage.admission.recordHits(UnsafeBufferPointer(start: storage.pendingFingerprints, count: count))
        case .sieve, .s3fifo:
            break
        }
    }

    /// Updates the policy's bookkeeping after a replacement, at once (the buffer has been
    /// caught up with before).
    @inlinable
    mutating func recordAccess(_ slot: Int) {
        switch policy.kind {
        case .leastRecentlyUsed:
            storage.moveToFront(slot)
        case .sieve:
            if storage[mark: slot].frequency == 0 { storage[mark: slot].frequency = 1 }
        case .s3fifo:
            if storage[mark: slot].frequency < Self.maximumFrequency { storage[mark: slot].frequency += 1 }
        case .adaptive:
            // The key's fingerprint was stored with the entry: a hit neither copies nor hashes
            // the key.
            let node = storage.nodes[slot]
            if storage[mark: slot].frequency < Self.maximumFrequency { storage[mark: slot].frequency += 1 }
            if node.isInSmallQueue { storage.moveToFrontOfSmallQueue(slot) }
            storage.admission.recordHit(node.fingerprint)
        }
    }

    /// Whether a new entry for `key`, filled but not yet linked in `slot`, starts in the small
    /// queue (S3-FIFO's, or the adaptive policy's window) rather than at the head of the main
    /// list; decided before room is made for it, as the key may be in the ghost queue.
    @inlinable
    mutating func admitsToSmallQueue(_ key: MemoryCache.HashedKey, slot: Int) -> Bool {
        switch policy.kind {
        case .leastRecentlyUsed, .sieve:
            return false
        case .s3fifo:
            // A key evicted from the small queue that comes back while still remembered has
            // proved it is reused: it skips the small queue.
            return !storage.ghosts.remove(key.hash)
        case .adaptive:
            // Every newcomer waits in the window; an insertion is a request that missed. The
            // fingerprint is kept for the entry's life.
            let fingerprint = UInt32(truncatingIfNeeded: key.hash)
            storage.nodes[slot].fingerprint = fingerprint
            // Room is made for it when it does not fit: only then is the sketch widened.
            let isFull = storage.totalCost + storage.nodes[slot].cost > costLimit || storage.count > countLimit
            storage.admission.recordMiss(fingerprint, entries: storage.count, widens: isFull)
            return true
        }
    }

    /// Chooses the entry to evict next, or returns `nil` when the cache is empty; the caller
    /// must remove it.
    ///
    /// Choosing updates the policy's state: SIEVE's hand clears visited bits on its way,
    /// S3-FIFO moves read entries between its queues and remembers the victim's key if it
    /// leaves from the small queue. `cost` and `count` are what the cache is being evicted
    /// down to; S3-FIFO sizes its small queue from them.
    @inlinable
    mutating func nextVictim(toCost cost: Int, count: Int) -> Int? {
        switch policy.kind {
        case .leastRecentlyUsed:
            storage.main.tail == MemoryCache.Storage.none ? nil : storage.main.tail
        case .sieve:
            nextSieveVictim()
        case .s3fifo:
            nextS3FIFOVictim(toCost: cost, count: count)
        case .adaptive:
            nextAdaptiveVictim(toCost: cost, count: count)
        }
    }

    /// SIEVE: from the hand towards the head, wrapping to the tail, the first entry not
    /// visited since the hand last passed it, clearing the visited bits on the way.
    ///
    /// Terminates within one lap plus one entry: a lap clears every bit. O(1) amortized, as
    /// each cleared bit was set by an earlier hit.
    @inlinable
    mutating func nextSieveVictim() -> Int? {
        let none = MemoryCache.Storage.none
        guard storage.main.tail != none else { return nil }
        var slot = storage.hand == none ? storage.main.tail : storage.hand
        while storage[mark: slot].frequency != 0 {
            storage[mark: slot].frequency = 0
            slot = storage.links[slot].previous
            if slot == none { slot = storage.main.tail }
        }
        // Removing the victim then moves the hand on to the next newer entry.
        storage.hand = slot
        return slot
    }

    /// S3-FIFO: the oldest entry of the small queue while that queue holds more than its share
    /// (or the main queue is empty), otherwise the oldest entry of the main queue; read entries
    /// are passed over as ``MemoryEvictionPolicy/s3fifo`` describes.
    ///
    /// The small queue's share is a tenth of `cost` and a tenth of `count`, rounded up, so that
    /// even in a cache of a few entries the newest one can wait in it for a read. O(1)
    /// amortized: each pass-over spends a read recorded by an earlier hit, or moves an entry
    /// out of the small queue.
    @inlinable
    mutating func nextS3FIFOVictim(toCost cost: Int, count: Int) -> Int? {
        let none = MemoryCache.Storage.none
        while true {
            let small = storage.small
            let isSmallOverShare =
                small.cost > Self.tenthRoundedUp(cost) || small.count > Self.tenthRoundedUp(count)
            if small.tail != none && (isSmallOverShare || storage.main.tail == none) {
                let slot = small.tail
                guard storage[mark: slot].frequency > 0 else {
                    storage.ghosts.append(storage.hash(at: slot), limit: storage.main.count)
                    return slot
                }
                storage[mark: slot].frequency = 0
                storage.moveToHeadOfMain(slot)
            } else if storage.main.tail != none {
                let slot = storage.main.tail
                let frequency = storage[mark: slot].frequency
                guard frequency > 0 else { return slot }
                storage[mark: slot].frequency = frequency - 1
                storage.moveToFront(slot)
            } else {
                return nil
            }
        }
    }

    @inlinable
    static func tenthRoundedUp(_ value: Int) -> Int {
        value / 10 + (value % 10 == 0 ? 0 : 1)
    }
}

/// LRU's replay of its read buffer: moves each of `count` slots, in order, to the head of the
/// queue whose ends are `head` and `tail`, as ``MemoryCache/Storage/moveToFront(_:)`` does one
/// by one.
///
/// `links` is ``MemoryCache/Storage/links``' memory: per slot, two `Int32`s, the previous and
/// the next slot (-1 for none). It first prefetches, for writing, the links of every slot and
/// of its neighbours, so that the relinks find them in the core's cache instead of waiting for
/// three misses per entry one after another (on two threads, for lines the other core last
/// wrote) while the shard's lock is held; a neighbour that an earlier move changes costs only
/// a wasted fetch. Not generic and not inlinable, so that it is compiled once, here, over raw
/// memory: one call per replay rather than an array's uniqueness check per relink.
@usableFromInline
func replayMovesToFront(
    ofLinks links: UnsafeMutableRawPointer, _ slots: UnsafePointer<Int>, _ count: Int, head: inout Int,
    tail: inout Int
) {
    assert(MemoryLayout<MemoryCache<Int, Int>.Link>.stride == 8, "a slot's links are two Int32s")
    @inline(__always) func previous(_ slot: Int) -> Int { Int(links.load(fromByteOffset: slot &* 8, as: Int32.self)) }
    @inline(__always) func next(_ slot: Int) -> Int { Int(links.load(fromByteOffset: slot &* 8 &+ 4, as: Int32.self)) }
    @inline(__always) func setPrevious(_ slot: Int, _ value: Int) {
        links.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: slot &* 8, as: Int32.self)
    }
    @inline(__always) func setNext(_ slot: Int, _ value: Int) {
        links.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: slot &* 8 &+ 4, as: Int32.self)
    }
    for index in 0..<count { stash_prefetch_for_writing(links + slots[index] &* 8) }
    for index in 0..<count {
        let slot = slots[index]
        let before = previous(slot)
        let after = next(slot)
        if before >= 0 { stash_prefetch_for_writing(links + before &* 8) }
        if after >= 0 { stash_prefetch_for_writing(links + after &* 8) }
    }
    for index in 0..<count {
        let slot = slots[index]
        guard slot != head else { continue }
        // Not the head, so it has a newer neighbour, and the queue has a head.
        let before = previous(slot)
        let after = next(slot)
        setNext(before, after)
        if after >= 0 { setPrevious(after, before) } else { tail = before }
        setPrevious(slot, -1)
        setNext(slot, head)
        setPrevious(head, slot)
        head = slot
    }
}
