#if canImport(os)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value protected by the cheapest mutual-exclusion lock the platform offers
/// (`os_unfair_lock` on Apple platforms, a `pthread_mutex_t` elsewhere).
///
/// Keep critical sections short: decide under the lock, act (I/O, callbacks, logging)
/// outside it. This is the package's one lock type: the `stash` tool uses it too.
///
/// Why not `Synchronization.Mutex`: measured, it is not at least as fast here. A `LockedValue`
/// over `Mutex` (inline in the object, the value behind the same pointer) built and passed the
/// tests, but on Linux the memory tier's uncontended hot paths were slower with it: best of 35
/// timed runs each (`StashBenchmarks --no-disk --quick`, five interleaved invocations per build,
/// loaded 2-core VM, 2026-11-25), a `MemoryCache` hit took 69 ns against 56 ns with
/// `pthread_mutex_t` (LRU), 101 against 53 ns (S3-FIFO), a set 86 against 64 ns; a `Cache<Data>`
/// memory hit was even (296 / 300 ns) and the disk tier's reads and writes were within noise.
/// (Linux's `Mutex` is a priority-inheritance futex that records the owner's thread ID.) It
/// would also need macOS 15 / iOS 18 where the package supports macOS 13 / iOS 16, where it is
/// an `os_unfair_lock` like this one; and being non-copyable, it cannot be shared by reference
/// or captured by escaping closures as the caches' state is.
///
/// `withLock` is inlinable, like the storage it touches, so that a cache's hot path
/// specializes in the client module instead of calling generic code through metadata. The
/// value lives behind a pointer rather than in a stored property, because every access to a
/// class's stored property is checked for exclusivity at run time, and the mutex already
/// guarantees it.
// @unchecked: every access to `value` goes through `withLock`, which holds the mutex.
@usableFromInline
package final class LockedValue<Value>: @unchecked Sendable {
    // Only `withLock` may touch these; they are visible to inlined code, not to callers.
    @usableFromInline let value: UnsafeMutablePointer<Value>
    #if canImport(os)
        @usableFromInline let mutex: UnsafeMutablePointer<os_unfair_lock>
    #else
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    @usableFromInline
    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
        #if canImport(os)
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: os_unfair_lock())
        #else
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        #if !canImport(os)
            pthread_mutex_destroy(mutex)
        #endif
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(os)
            os_unfair_lock_lock(mutex)
            defer { os_unfair_lock_unlock(mutex) }
        #else
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
        #endif
        return try body(&value.pointee)
    }
}
