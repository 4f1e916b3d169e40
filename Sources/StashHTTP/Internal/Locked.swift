#if canImport(os)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value protected by the platform's cheapest mutex (`os_unfair_lock` on Apple platforms,
/// `pthread_mutex_t` elsewhere).
///
/// StashHTTP cannot see Stash's internal `LockedValue`, and `Synchronization.Mutex` needs
/// macOS 15, above the package's deployment target. Decide under the lock, act outside it.
// @unchecked: every access to `value` goes through `withLock`, which holds the mutex.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    #if canImport(os)
        private let mutex: UnsafeMutablePointer<os_unfair_lock>
    #else
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        #if canImport(os)
            mutex.initialize(to: os_unfair_lock())
        #else
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
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        #if canImport(os)
            os_unfair_lock_lock(mutex)
            defer { os_unfair_lock_unlock(mutex) }
        #else
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
        #endif
        return try body(&value)
    }
}
