extension MemoryCache {
    /// Gives memory back: halves the cache on ``MemoryPressureLevel/warning`` and empties it on
    /// ``MemoryPressureLevel/critical``; does nothing on ``MemoryPressureLevel/normal``.
    ///
    /// Halving evicts entries in the order of the ``policy`` until both ``totalCost`` and ``totalCount``
    /// are at most half of what they were: each shard keeps its part of the half, in proportion
    /// to what it holds. Evicted entries are counted in
    /// ``MemoryCacheStatistics/evictions`` and reported with
    /// ``MemoryEvictionReason/memoryPressure``. Call it yourself (for example from
    /// `UIApplication.didReceiveMemoryWarningNotification`) or let
    /// ``startRespondingToMemoryPressure(_:)`` call it.
    ///
    /// - Parameter level: How severe the pressure is.
    /// - Complexity: O(k) amortized for k evicted entries on a warning; O(n) on critical pressure, with
    ///   the values released outside the lock.
    public func handleMemoryPressure(_ level: MemoryPressureLevel) {
        switch level {
        case .normal:
            return
        case .warning:
            // Half of the whole, split among the shards in proportion to what each holds.
            let totals = eachShard { (cost: $0.storage.totalCost, count: $0.storage.count) }
            let costs = Self.proportionalShares(of: totals.map(\.cost).reduce(0, +) / 2, among: totals.map(\.cost))
            let counts = Self.proportionalShares(of: totals.map(\.count).reduce(0, +) / 2, among: totals.map(\.count))
            for index in 0..<shards.count {
                mutate(shards[index]) { state, evictions in
                    state.evict(
                        toCost: costs[index], count: counts[index], reason: .memoryPressure, evictions: &evictions)
                }
            }
        case .critical:
            removeAll(reason: .memoryPressure)
        }
    }

    /// Calls ``handleMemoryPressure(_:)`` whenever `monitor` reports that pressure has risen,
    /// until ``stopRespondingToMemoryPressure()`` or the cache is deallocated.
    ///
    /// Responding to a second monitor replaces the first. This only subscribes: call
    /// ``MemoryPressureMonitor/start()`` on the monitor to begin watching the system.
    ///
    /// - Parameter monitor: The monitor to follow.
    /// - Complexity: O(1).
    public func startRespondingToMemoryPressure(_ monitor: MemoryPressureMonitor) {
        let id = monitor.addHandler { [weak self] level in self?.handleMemoryPressure(level) }
        let previous = shards[0].withLock { state in
            defer { state.pressureSubscription = (monitor, id) }
            return state.pressureSubscription
        }
        if let previous { previous.monitor.removeHandler(previous.id) }
    }

    /// Stops following the monitor given to ``startRespondingToMemoryPressure(_:)``.
    ///
    /// - Complexity: O(1).
    public func stopRespondingToMemoryPressure() {
        let previous = shards[0].withLock { state in
            defer { state.pressureSubscription = nil }
            return state.pressureSubscription
        }
        if let previous { previous.monitor.removeHandler(previous.id) }
    }
}
