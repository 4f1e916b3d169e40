// Where the eviction policy decides. Each function switches over ``MemoryEvictionPolicy``;
// a new policy adds its case here and, if it needs per-entry bits (SIEVE's "visited"),
// a field on `Node`.
extension MemoryCache.State {
    /// Updates the policy's bookkeeping after a hit or a replacement.
    @inlinable
    mutating func recordAccess(_ slot: Int) {
        switch policy {
        case .leastRecentlyUsed: storage.moveToFront(slot)
        }
    }

    /// Places a newly allocated entry in the policy's order.
    @inlinable
    mutating func recordInsertion(_ slot: Int) {
        switch policy {
        case .leastRecentlyUsed: storage.linkAtFront(slot)
        }
    }

    /// The entry to give up next, or `nil` when the cache is empty.
    @inlinable
    func victim() -> Int? {
        switch policy {
        case .leastRecentlyUsed:
            storage.tail == MemoryCache.Storage.none ? nil : storage.tail
        }
    }
}
