// Where the eviction policy decides. Each function switches over ``MemoryEvictionPolicy``;
// the per-entry bits a policy needs live on `Node`, and its per-cache state on `Storage`.
extension MemoryCache.State {
    /// Updates the policy's bookkeeping after a hit or a replacement.
    @inlinable
    mutating func recordAccess(_ slot: Int) {
        switch policy {
        case .leastRecentlyUsed: storage.moveToFront(slot)
        }
    }

    /// Whether a new entry for `key` starts in the small queue rather than at the head of the
    /// main list; decided before room is made for it.
    @inlinable
    mutating func admitsToSmallQueue(_ key: Key) -> Bool {
        switch policy {
        case .leastRecentlyUsed: false
        }
    }

    /// Chooses the entry to evict next, or returns `nil` when the cache is empty; the caller
    /// must remove it.
    ///
    /// `cost` and `count` are what the cache is being evicted down to.
    @inlinable
    mutating func nextVictim(toCost cost: Int, count: Int) -> Int? {
        switch policy {
        case .leastRecentlyUsed:
            storage.main.tail == MemoryCache.Storage.none ? nil : storage.main.tail
        }
    }
}
