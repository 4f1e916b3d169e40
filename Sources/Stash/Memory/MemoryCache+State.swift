extension MemoryCache {
    /// An entry that the cache dropped on its own, waiting to be reported to
    /// ``MemoryCache/onEviction`` once the lock is released.
    @usableFromInline
    struct Eviction {
        @usableFromInline let key: Key
        @usableFromInline let value: Value
        @usableFromInline let reason: MemoryEvictionReason

        @inlinable
        init(key: Key, value: Value, reason: MemoryEvictionReason) {
            self.key = key
            self.value = value
            self.reason = reason
        }
    }

    /// Evictions decided under the lock.
    ///
    /// They are collected only when there is a callback to hand them to; otherwise the values
    /// are released on the spot.
    @usableFromInline
    struct Evictions {
        @usableFromInline var isCollecting = false
        @usableFromInline var items: [Eviction] = []

        @inlinable
        init() {}

        @inlinable
        mutating func append(_ entry: Entry, reason: MemoryEvictionReason) {
            if isCollecting { items.append(Eviction(key: entry.key, value: entry.value, reason: reason)) }
        }
    }

    /// What ``State/lookUp(_:at:evictions:)`` found.
    @usableFromInline
    enum Lookup {
        /// A live entry, in this slot.
        case found(Int)
        /// No entry, or one that had expired and has now been removed.
        case missing
        /// An entry with an expiry, which cannot be judged without the time. Nothing has
        /// changed: read the clock and look again.
        case needsTime
    }

    /// Everything one shard of a ``MemoryCache`` guards with its lock: its part of the entries,
    /// of the limits and of the statistics.
    @usableFromInline
    struct State {
        // What a hit writes (the lock, the read buffer's count, the hit counter) shares the
        // shard lock's cache line, and what it only reads (the policy, the storage's index and
        // items) follows: when two threads take turns on a shard, one line changes hands.
        @usableFromInline let policy: MemoryEvictionPolicy
        /// How many of ``Storage/pendingSlots`` wait to be replayed.
        @usableFromInline var pendingCount = 0
        /// How many of the adaptive policy's buffered hits are on entries of its window: their
        /// slots are the first ones of ``Storage/pendingSlots`` (the others' are not kept).
        @usableFromInline var pendingWindowCount = 0
        @usableFromInline var statistics = MemoryCacheStatistics()
        @usableFromInline var storage = Storage()
        let entryCostLimitRatio: Double
        @usableFromInline private(set) var costLimit: Int
        @usableFromInline var countLimit: Int
        /// The largest cost a single entry may have: the cache's `costLimit × entryCostLimitRatio`,
        /// rounded down, and at most this shard's `costLimit`.
        @usableFromInline private(set) var entryCostLimit = 0
        @usableFromInline var onEviction: (@Sendable (Key, Value, MemoryEvictionReason) -> Void)?
        var pressureSubscription: (monitor: MemoryPressureMonitor, id: MemoryPressureMonitor.HandlerID)?
        /// Slots hit through ``MemoryCache/value(forKey:reportingHit:)`` whose hits wait to be
        /// taken, each once (its node counts the hits).
        @usableFromInline var reportedSlots: [Int] = []
        /// Keys whose reported hits wait to be taken, with the count, once their slots were
        /// about to be freed or reused.
        @usableFromInline var reportedKeys: [(key: Key, hits: Int)] = []
        /// How many hits were reported, ever.
        @usableFromInline var reportedHitCount = 0

        init(costLimit: Int, countLimit: Int, entryCostLimitRatio: Double, policy: MemoryEvictionPolicy) {
            self.costLimit = costLimit
            self.countLimit = countLimit
            self.entryCostLimitRatio = entryCostLimitRatio
            self.policy = policy
            setCostLimit(costLimit, cacheCostLimit: costLimit)
        }

        /// Sets this shard's cost limit, `limit`, part of the cache's `cacheCostLimit`.
        mutating func setCostLimit(_ limit: Int, cacheCostLimit: Int) {
            costLimit = limit
            let entryLimit = Double(cacheCostLimit) * entryCostLimitRatio
            // Double(Int.max) rounds up to 2⁶³, which Int(_:) would trap on.
            entryCostLimit = min(limit, entryLimit >= Double(Int.max) ? Int.max : Int(entryLimit))
        }

        /// Looks a key up, removing the entry if it has expired.
        ///
        /// `now` is the time since the cache's epoch, as ``MemoryCache/clock`` reads it, or `nil`
        /// if the caller has not read the clock; then finding an entry that has an expiry
        /// returns ``Lookup/needsTime``.
        @inlinable
        mutating func lookUp(_ key: HashedKey, at now: Duration?, evictions: inout Evictions) -> Lookup {
            guard let slot = storage.slot(forKey: key) else { return .missing }
            // Without expiring entries a hit reads no node: one cache miss fewer.
            guard storage.expiringCount > 0, let expiry = storage.nodes[slot].expiry else { return .found(slot) }
            guard let now else { return .needsTime }
            guard now < expiry else {
                expire(slot, evictions: &evictions)
                return .missing
            }
            return .found(slot)
        }

        @inlinable
        mutating func expire(_ slot: Int, evictions: inout Evictions) {
            catchUp()
            evictions.append(storage.remove(at: slot), reason: .expired)
            statistics.expirations += 1
        }

        /// Stores a value, or removes the key's current value when the new one may not be kept.
        ///
        /// Returns the value it displaced, to be released outside the lock.
        @inlinable
        mutating func store(
            _ value: Value, forKey key: HashedKey, cost: Int, expiry: Duration?, isAcceptable: Bool,
            evictions: inout Evictions
        ) -> Value? {
            catchUp()
            guard isAcceptable, cost <= entryCostLimit, countLimit > 0 else {
                return storage.slot(forKey: key).map { storage.remove(at: $0).value }
            }
            let (slot, isClaimed) = storage.slot(claimingFor: key)
            let displaced: Value?
            if isClaimed {
                displaced = nil
                storage.fill(slot, key: key, value: value, cost: cost, expiry: expiry)
                // The policies are defined as making room before they insert: the newcomer
                // stays unlinked until then, so that it can never be its own victim.
                let isIntoSmallQueue = admitsToSmallQueue(key, slot: slot)
                storage.admission.pendingSlot = slot
                evict(toCost: costLimit, count: countLimit, reserving: cost, reason: .limit, evictions: &evictions)
                let verdict = storage.admission.pendingVerdict
                storage.admission.pendingSlot = MemoryCache.Storage.none
                storage.admission.pendingVerdict = .undecided
                // An adaptive newcomer larger than the window that won its contest goes straight
                // to the main queue, whose victims made its room; one that lost is not kept.
                storage.link(slot, intoSmallQueue: isIntoSmallQueue && verdict != .admitted)
                if verdict == .rejected {
                    let node = storage.nodes[slot]
                    storage.admission.rememberEviction(node.fingerprint, cost: node.cost, isInWindow: true)
                    evictions.append(storage.remove(at: slot), reason: .notAdmitted)
                    statistics.evictions += 1
                    statistics.notAdmitted += 1
                } else if policy.kind == .adaptive {
                    balanceAdaptiveWindow(toCost: costLimit, count: countLimit, sparing: slot)
                }
            } else {
                displaced = storage.replace(at: slot, value: value, cost: cost, expiry: expiry)
                recordAccess(slot)
                evict(toCost: costLimit, count: countLimit, reason: .limit, evictions: &evictions)
            }
            statistics.insertions += 1
            return displaced
        }

        /// Removes entries in eviction order until the totals are at most `cost` and `count`.
        @inlinable
        mutating func evict(
            toCost cost: Int, count: Int, reason: MemoryEvictionReason, evictions: inout Evictions
        ) {
            evict(toCost: cost, count: count, reserving: 0, reason: reason, evictions: &evictions)
        }

        /// Removes entries in eviction order until the total cost is at most `cost - reserved`
        /// and the count at most `count`.
        ///
        /// `reserved` is the cost of a filled entry that is not linked yet, which must fit too;
        /// the count already includes it. S3-FIFO still sizes its small queue from `cost`.
        @inlinable
        mutating func evict(
            toCost cost: Int, count: Int, reserving reserved: Int, reason: MemoryEvictionReason,
            evictions: inout Evictions
        ) {
            catchUp()
            // The entry being stored joins the adaptive window after this: it counts there.
            storage.admission.pendingCost = reserved
            defer { storage.admission.pendingCost = 0 }
            // The adaptive policy remembers what it evicts to make room (not what memory
            // pressure takes) as the evidence of its climber.
            let remembers = policy.kind == .adaptive && reason == .limit
            if remembers && (storage.totalCost > cost - reserved || storage.count > count) {
                storage.admission.setRegretLimits(costLimit: cost, countLimit: count, entries: storage.count)
            }
            // The adaptive policy's won contest condemns several entries: they all go.
            while storage.totalCost > cost - reserved || storage.count > count || storage.admission.condemned > 0,
                let slot = nextVictim(toCost: cost, count: count)
            {
                if remembers {
                    let node = storage.nodes[slot]
                    storage.admission.rememberEviction(
                        node.fingerprint, cost: node.cost, isInWindow: node.isInSmallQueue)
                }
                evictions.append(storage.remove(at: slot), reason: reason)
                statistics.evictions += 1
            }
            storage.admission.condemned = 0
        }

        mutating func removeExpired(at now: Duration, evictions: inout Evictions) {
            catchUp()
            // Collect first: removing while following the links would lose the next link.
            let expired = storage.slotsFromBack().filter { storage.nodes[$0].isExpired(at: now) }
            for slot in expired { expire(slot, evictions: &evictions) }
        }
    }
}
