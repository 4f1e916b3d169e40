/// Which entry a ``MemoryCache`` gives up first when it is over a limit.
///
/// Only least-recently-used exists today. A scan-resistant policy (S3-FIFO, SIEVE) is added
/// as a new case here plus its branches in `MemoryCache+Eviction.swift`; the storage, the
/// limits and the public API do not change.
@usableFromInline
enum MemoryEvictionPolicy: Sendable {
    /// Every hit moves the entry to the front of the list; the victim is the entry at the back.
    case leastRecentlyUsed
}
