/// The state an eviction policy keeps for one entry, stored in the index.
package struct PolicyState: Hashable, Sendable {
    /// Which of the policy's queues the entry is in (0 for single-queue policies).
    package var queue: Int
    /// The entry's position in its queue: the lowest rank is evicted (or examined) first.
    package var rank: Int64
    /// Hits since the entry was (re)inserted, capped by the policy; SIEVE uses it as its bit.
    package var frequency: Int

    package init(queue: Int, rank: Int64, frequency: Int) {
        self.queue = queue
        self.rank = rank
        self.frequency = frequency
    }
}

/// One unpinned entry as a policy sees it.
package struct PolicyEntry: Hashable, Sendable {
    package var id: Int64
    package var size: Int
    package var state: PolicyState
    /// A 64-bit hash of the key, remembered by ghost queues after the entry is gone.
    package var fingerprint: Int64

    package init(id: Int64, size: Int, state: PolicyState, fingerprint: Int64) {
        self.id = id
        self.size = size
        self.state = state
        self.fingerprint = fingerprint
    }
}

/// What an eviction policy may read and change of a cache's index.
///
/// DiskCache implements it over SQLite (inside its write transaction); the trace simulator
/// implements it in memory. Both run the very same policy code (`EvictionPolicy`), so a
/// simulation predicts what the disk cache does.
package protocol EvictionIndex {
    /// Bytes and count of unpinned entries, updated as entries are evicted.
    var evictable: (size: Int, count: Int) { get }

    /// Up to `limit` unpinned entries of `queue` whose rank is at least `rank`, lowest first,
    /// leaving out the entry being written.
    mutating func entries(inQueue queue: Int, fromRank rank: Int64, limit: Int) throws -> [PolicyEntry]

    /// Bytes and count of the unpinned entries in `queue`, the entry being written included.
    mutating func queueTotals(_ queue: Int) throws -> (size: Int, count: Int)

    /// The unpinned entry being written, which eviction must spare, as it was when eviction began.
    var incoming: PolicyEntry? { get }

    /// Whether the adaptive policy may evict ``incoming`` when it loses its contest for room
    /// (`false` for a write that must keep its entry, such as a file someone is waiting for).
    var mayEvictIncoming: Bool { get }

    /// Changes an entry's policy state.
    mutating func setState(_ state: PolicyState, forEntry id: Int64) throws

    /// Removes an entry from the cache.
    mutating func evict(_ entry: PolicyEntry) throws

    /// A rank higher than any given before (a shared logical clock).
    mutating func nextRank() throws -> Int64

    /// Remembers the fingerprint of a key evicted from the probationary queue.
    mutating func rememberGhost(_ fingerprint: Int64, limit: Int) throws

    /// Whether `fingerprint` was remembered; it is forgotten either way.
    mutating func takeGhost(_ fingerprint: Int64) throws -> Bool

    /// A policy's persistent cursor (SIEVE's hand), 0 when unset.
    mutating func cursor() throws -> Int64

    /// Moves the cursor.
    mutating func setCursor(_ rank: Int64) throws

    /// Runs `body` on the index's frequency sketch, which is created empty on first use.
    mutating func withFrequencySketch<T>(_ body: (inout FrequencySketch) throws -> T) throws -> T
}
