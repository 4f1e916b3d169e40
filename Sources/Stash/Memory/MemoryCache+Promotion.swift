extension MemoryCache {
    /// Stores a value read from a slower tier (a disk hit) only when the eviction policy says it
    /// is worth more than what it would push out; returns whether it was stored.
    ///
    /// Where ``setValue(_:forKey:cost:timeToLive:)`` always keeps the newcomer, this keeps it
    /// only when it fits in free room, replaces the key's own entry, or, under
    /// ``MemoryEvictionPolicy/adaptive``, when the frequency sketch estimates more recent
    /// requests for it (this one included) than for the least valuable of the entries it would
    /// evict first: the window's oldest entry and the main queue's. A refused value changes no
    /// entry; its request is counted in the sketch, so that a key read from disk again and again
    /// gets in. A one-off read of a large working set therefore cannot push the hot set out.
    /// Under the other policies it behaves as ``setValue(_:forKey:cost:timeToLive:)``.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - cost: What the value costs against ``costLimit``; as in
    ///     ``setValue(_:forKey:cost:timeToLive:)``.
    ///   - timeToLive: How long the value is served. Defaults to ``defaultTimeToLive``.
    /// - Returns: `true` when the value was stored.
    /// - Complexity: O(1) amortized, plus O(k) for k evicted entries when it is stored.
    @discardableResult
    public func promoteValue(_ value: Value, forKey key: Key, cost: Int? = nil, timeToLive: Duration? = nil) -> Bool {
        storeIfAdmitted(value, forKey: key, cost: cost, timeToLive: timeToLive) { state, key, cost in
            state.admitsPromotion(key, cost: cost)
        }
    }

    /// Whether ``promoteValue(_:forKey:cost:timeToLive:)`` would store a value of `cost` for
    /// `key` now, decided (and a refusal counted in the sketch) without the value: lets a caller
    /// skip reading a value that memory would not keep.
    ///
    /// - Complexity: O(1).
    public func admitsPromotion(forKey key: Key, cost: Int) -> Bool {
        let key = HashedKey(key)
        return mutate(shard(for: key)) { state, _ in
            state.catchUp()
            return cost <= state.entryCostLimit && state.admitsPromotion(key, cost: cost)
        }
    }
    /// Stores a value only when it fits in free room: nothing is evicted for it, under any
    /// policy; returns whether it was stored.
    ///
    /// For a value that is worth keeping while memory is idle but not worth the entries it
    /// would push out, such as a large body that another tier can also serve: a cache whose
    /// working set fits keeps it, a full one keeps what it has. Replacing the key's own entry
    /// counts that entry's cost as free.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - cost: What the value costs against ``costLimit``; as in
    ///     ``setValue(_:forKey:cost:timeToLive:)``.
    ///   - timeToLive: How long the value is served. Defaults to ``defaultTimeToLive``.
    /// - Returns: `true` when the value was stored; `false` leaves every entry as it was.
    /// - Complexity: O(1).
    @discardableResult
    public func setValueIfRoom(_ value: Value, forKey key: Key, cost: Int? = nil, timeToLive: Duration? = nil) -> Bool {
        guard (timeToLive ?? defaultTimeToLive).map({ $0 > .zero }) ?? true else { return false }
        return storeIfAdmitted(value, forKey: key, cost: cost, timeToLive: timeToLive) { state, key, cost in
            state.hasRoom(for: key, cost: cost)
        }
    }

    /// Whether ``setValueIfRoom(_:forKey:cost:timeToLive:)`` would store a value of `cost` for
    /// `key` now: lets a caller skip reading a value that memory has no free room for.
    ///
    /// - Complexity: O(1).
    public func hasRoom(forKey key: Key, cost: Int) -> Bool {
        let key = HashedKey(key)
        return mutate(shard(for: key)) { state, _ in
            state.catchUp()
            return state.hasRoom(for: key, cost: cost)
        }
    }

    /// Stores a value as ``setValue(_:forKey:cost:timeToLive:)`` does, if `admits` allows it.
    ///
    /// `admits` runs in the shard's lock, after the policy caught up; a refusal changes nothing.
    /// Returns whether the value is stored.
    private func storeIfAdmitted(
        _ value: Value, forKey key: Key, cost: Int?, timeToLive: Duration?,
        admits: (inout State, HashedKey, Int) -> Bool
    ) -> Bool {
        let cost = cost ?? costFunction?(value) ?? 1
        precondition(cost >= 0, "MemoryCache cost must not be negative; the cost of the value for \(key) is \(cost).")
        let timeToLive = timeToLive ?? defaultTimeToLive
        let expiry = timeToLive.map { clock() + $0 }
        let isAcceptable = timeToLive.map { $0 > .zero } ?? true
        let key = HashedKey(key)
        let (isStored, displaced) = mutate(shard(for: key)) { state, evictions -> (Bool, Value?) in
            state.catchUp()
            guard admits(&state, key, cost) else { return (false, nil) }
            let displaced = state.store(
                value, forKey: key, cost: cost, expiry: expiry, isAcceptable: isAcceptable, evictions: &evictions)
            return (isAcceptable && state.storage.slot(forKey: key) != nil, displaced)
        }
        _ = displaced  // Released here, outside the lock.
        return isStored
    }
}

extension MemoryCache.State {
    /// Whether a value read from a slower tier may enter (see ``MemoryCache/promoteValue(_:forKey:cost:timeToLive:)``);
    /// counts a refused one's request in the sketch.
    mutating func admitsPromotion(_ key: MemoryCache.HashedKey, cost: Int) -> Bool {
        guard policy.kind == .adaptive, storage.slot(forKey: key) == nil else { return true }
        if storage.totalCost + cost <= costLimit && storage.count < countLimit { return true }
        let fingerprint = UInt32(truncatingIfNeeded: key.hash)
        var victim = Int.max
        for slot in [storage.small.tail, storage.main.tail] where slot != MemoryCache.Storage.none {
            victim = min(victim, storage.admission.estimate(storage.nodes[slot].fingerprint))
        }
        // This request counts: an admitted value records it as it is stored.
        if victim == Int.max || storage.admission.estimate(fingerprint) + 1 > victim { return true }
        storage.admission.recordMiss(fingerprint, entries: storage.count, widens: false)
        return false
    }
}

extension MemoryCache.State {
    /// Whether a value of `cost` for `key` fits in free room: within the entry, cost and count
    /// limits without evicting, the key's own entry (if any) counted as free.
    func hasRoom(for key: MemoryCache.HashedKey, cost: Int) -> Bool {
        guard cost <= entryCostLimit, countLimit > 0 else { return false }
        let slot = storage.slot(forKey: key)
        let held = slot.map { storage.nodes[$0].cost } ?? 0
        return storage.totalCost - held + cost <= costLimit && storage.count + (slot == nil ? 1 : 0) <= countLimit
    }
}
