extension MemoryCache {
    /// An entry that the cache dropped on its own, waiting to be reported to
    /// ``MemoryCache/onEviction`` once the lock is released.
    typealias Eviction = (key: Key, value: Value, reason: MemoryEvictionReason)

    /// Evictions decided under the lock.
    ///
    /// They are collected only when there is a callback to hand them to; otherwise the values
    /// are released on the spot.
    struct Evictions {
        let isCollecting: Bool
        var items: [Eviction] = []

        mutating func append(_ node: Node, reason: MemoryEvictionReason) {
            if isCollecting { items.append((node.key, node.value, reason)) }
        }
    }

    /// Everything ``MemoryCache`` guards with its one lock.
    struct State {
        var storage = Storage()
        let policy: MemoryEvictionPolicy
        let entryCostLimitRatio: Double
        private(set) var costLimit: Int
        var countLimit: Int
        /// The largest cost a single entry may have: `costLimit × entryCostLimitRatio`, rounded down.
        private(set) var entryCostLimit = 0
        var statistics = MemoryCacheStatistics()
        var onEviction: (@Sendable (Key, Value, MemoryEvictionReason) -> Void)?
        var pressureSubscription: (monitor: MemoryPressureMonitor, id: MemoryPressureMonitor.HandlerID)?

        init(costLimit: Int, countLimit: Int, entryCostLimitRatio: Double, policy: MemoryEvictionPolicy) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.entryCostLimitRatio = entryCostLimitRatio
            self.policy = policy
            setCostLimit(costLimit)
        }

        mutating func setCostLimit(_ limit: Int) {
            costLimit = limit
            let entryLimit = Double(limit) * entryCostLimitRatio
            // Double(Int.max) rounds up to 2⁶³, which Int(_:) would trap on.
            entryCostLimit = entryLimit >= Double(Int.max) ? Int.max : Int(entryLimit)
        }

        /// Looks a key up, removing the entry if it has expired.
        mutating func lookUp(
            _ key: Key, at now: ContinuousClock.Instant, evictions: inout Evictions
        ) -> Int? {
            guard let slot = storage.slot(forKey: key) else { return nil }
            guard !storage[slot].isExpired(at: now) else {
                expire(slot, evictions: &evictions)
                return nil
            }
            return slot
        }

        mutating func expire(_ slot: Int, evictions: inout Evictions) {
            evictions.append(storage.remove(at: slot), reason: .expired)
            statistics.expirations += 1
        }

        /// Stores a value, or removes the key's current value when the new one may not be kept.
        ///
        /// Returns the value it displaced, to be released outside the lock.
        mutating func store(
            _ value: Value, forKey key: Key, cost: Int, expiry: ContinuousClock.Instant?, isAcceptable: Bool,
            evictions: inout Evictions
        ) -> Value? {
            let existing = storage.slot(forKey: key)
            guard isAcceptable, cost <= entryCostLimit, countLimit > 0 else {
                return existing.map { storage.remove(at: $0).value }
            }
            let displaced: Value?
            if let slot = existing {
                displaced = storage.replace(at: slot, value: value, cost: cost, expiry: expiry)
                recordAccess(slot)
            } else {
                displaced = nil
                recordInsertion(storage.allocate(key: key, value: value, cost: cost, expiry: expiry))
            }
            statistics.insertions += 1
            evict(toCost: costLimit, count: countLimit, reason: .limit, evictions: &evictions)
            return displaced
        }

        /// Removes entries in eviction order until the totals are at most `cost` and `count`.
        mutating func evict(
            toCost cost: Int, count: Int, reason: MemoryEvictionReason, evictions: inout Evictions
        ) {
            while storage.totalCost > cost || storage.count > count, let slot = victim() {
                evictions.append(storage.remove(at: slot), reason: reason)
                statistics.evictions += 1
            }
        }

        mutating func removeExpired(at now: ContinuousClock.Instant, evictions: inout Evictions) {
            // Collect first: removing while following the links would lose the next link.
            let expired = storage.slotsFromBack().filter { storage[$0].isExpired(at: now) }
            for slot in expired { expire(slot, evictions: &evictions) }
        }
    }
}
