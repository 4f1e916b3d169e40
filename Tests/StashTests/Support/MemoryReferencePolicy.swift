@testable import Stash

/// `MemoryCache`'s eviction policies written as plainly as possible, to check the production
/// storage against request by request: arrays, linear scans and keys instead of linked slots,
/// sharing no code with it.
///
/// It knows which keys are cached, at what cost, in which order, and the policies' state;
/// values, expiry and statistics are the caller's business.
struct MemoryReferencePolicy<Key: Hashable> {
    struct Entry {
        var key: Key
        var cost: Int
        /// SIEVE's visited bit, or S3-FIFO's read counter.
        var frequency = 0
    }

    let policy: MemoryEvictionPolicy
    /// The main list: most recently used first under LRU, newest first under SIEVE; S3-FIFO's
    /// main queue, newest first.
    private(set) var main: [Entry] = []
    /// S3-FIFO's small queue, newest first.
    private(set) var small: [Entry] = []
    /// S3-FIFO's ghost keys, oldest first.
    private(set) var ghosts: [Key] = []
    /// The key of the entry SIEVE's hand looks at next, or `nil` for the oldest entry.
    private(set) var hand: Key?

    init(_ policy: MemoryEvictionPolicy) { self.policy = policy }

    var keys: Set<Key> { Set((main + small).map(\.key)) }
    var count: Int { main.count + small.count }
    var totalCost: Int { (main + small).reduce(0) { $0 + $1.cost } }
    /// The small queue, then the main list, each oldest first, as `MemoryCache` reports them.
    var keysInEvictionOrder: [Key] { small.reversed().map(\.key) + main.reversed().map(\.key) }

    func contains(_ key: Key) -> Bool { (main + small).contains { $0.key == key } }

    /// A hit, or with `newCost` a replacement of the value.
    mutating func access(_ key: Key, newCost: Int? = nil) {
        if let index = small.firstIndex(where: { $0.key == key }) {
            small[index].cost = newCost ?? small[index].cost
            small[index].frequency = min(small[index].frequency + 1, 3)
            return
        }
        let index = main.firstIndex { $0.key == key }!
        main[index].cost = newCost ?? main[index].cost
        if policy == .leastRecentlyUsed {
            main.insert(main.remove(at: index), at: 0)
        } else if policy == .sieve {
            main[index].frequency = 1
        } else {
            main[index].frequency = min(main[index].frequency + 1, 3)
        }
    }

    /// Makes room for a key that is not cached, then adds it; returns the keys evicted to make
    /// room, in order.
    mutating func insert(_ key: Key, cost: Int, costLimit: Int, countLimit: Int) -> [Key] {
        let isReturningGhost = ghosts.contains(key)
        ghosts.removeAll { $0 == key }
        var evicted: [Key] = []
        while totalCost + cost > costLimit || count + 1 > countLimit,
            let victim = victim(toCost: costLimit, count: countLimit)
        {
            remove(victim)
            evicted.append(victim)
        }
        let entry = Entry(key: key, cost: cost)
        if policy == .s3fifo && !isReturningGhost { small.insert(entry, at: 0) } else { main.insert(entry, at: 0) }
        return evicted
    }

    /// Removes a key, as a removal by the caller or an expiry does: it does not become a ghost.
    mutating func remove(_ key: Key) {
        if let index = main.firstIndex(where: { $0.key == key }) {
            if hand == key { hand = index > 0 ? main[index - 1].key : nil }
            main.remove(at: index)
        } else {
            small.removeAll { $0.key == key }
        }
    }

    /// Evicts until the total cost is at most `cost` and the count at most `count`; returns the
    /// evicted keys in order.
    mutating func evict(toCost cost: Int, count targetCount: Int) -> [Key] {
        var evicted: [Key] = []
        while totalCost > cost || count > targetCount, let key = victim(toCost: cost, count: targetCount) {
            remove(key)
            evicted.append(key)
        }
        return evicted
    }

    mutating func removeAll() { self = MemoryReferencePolicy(policy) }

    private mutating func victim(toCost cost: Int, count targetCount: Int) -> Key? {
        if policy == .leastRecentlyUsed { return main.last?.key }
        if policy == .sieve { return sieveVictim() }
        return s3fifoVictim(toCost: cost, count: targetCount)
    }

    /// The hand walks from the oldest entry towards the newest, wrapping around, clearing
    /// visited bits, and stops at the first entry that is not visited.
    private mutating func sieveVictim() -> Key? {
        if main.isEmpty { return nil }
        var index = main.count - 1
        if let hand { index = main.firstIndex { $0.key == hand }! }
        while main[index].frequency == 1 {
            main[index].frequency = 0
            index = index == 0 ? main.count - 1 : index - 1
        }
        hand = main[index].key
        return main[index].key
    }

    private mutating func s3fifoVictim(toCost cost: Int, count targetCount: Int) -> Key? {
        while true {
            let smallCost = small.reduce(0) { $0 + $1.cost }
            let smallIsOverShare =
                Double(smallCost) > (Double(cost) / 10).rounded(.up)
                || Double(small.count) > (Double(targetCount) / 10).rounded(.up)
            if !small.isEmpty && (smallIsOverShare || main.isEmpty) {
                var oldest = small.removeLast()
                if oldest.frequency > 0 {
                    oldest.frequency = 0
                    main.insert(oldest, at: 0)
                } else {
                    small.append(oldest)
                    ghosts.append(oldest.key)
                    while ghosts.count > main.count { ghosts.removeFirst() }
                    return oldest.key
                }
            } else if var oldest = main.last {
                if oldest.frequency == 0 { return oldest.key }
                main.removeLast()
                oldest.frequency -= 1
                main.insert(oldest, at: 0)
            } else {
                return nil
            }
        }
    }
}
