#if canImport(os)
    import os
#elseif os(Linux)
    import CStashVFS
    import Synchronization
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value protected by the cheapest mutual-exclusion lock the platform offers: on Linux a
/// futex word whose uncontended lock and unlock are one atomic instruction each, inlined; an
/// `os_unfair_lock` on Apple platforms; a `pthread_mutex_t` elsewhere.
///
/// Keep critical sections short: decide under the lock, act (I/O, callbacks, logging)
/// outside it. This is the package's one lock type: the `stash` tool uses it too.
///
/// On Linux, a thread that finds the lock taken spins (``lockSpinLimit`` pauses) before it
/// sleeps on the futex, because a sleep and a wake-up cost far more than the memory tier's
/// critical sections: with glibc's default mutex, which sleeps at once, two threads on a shared
/// ``MemoryCache`` got about half the hits per second of two threads that shared nothing. The
/// word replaced a `PTHREAD_MUTEX_ADAPTIVE_NP` mutex (which spins too), whose two calls into
/// libc cost 65 of a SIEVE hit's 349 instructions (callgrind, 2026-11-26); inline, the hit
/// takes 284.
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
/// or captured by escaping closures as the caches' state is. (The Linux word is an `Atomic`
/// from the same module, which has no availability limit there.)
///
/// `withLock` is inlinable, like the storage it touches, so that a cache's hot path
/// specializes in the client module instead of calling generic code through metadata. The
/// value lives behind a pointer rather than in a stored property, because every access to a
/// class's stored property is checked for exclusivity at run time, and the mutex already
/// guarantees it.
///
/// The mutex and the value share one allocation aligned to, and padded to, 128 bytes (two cache
/// lines, as adjacent-line prefetching pairs them): two locks taken on two cores never share a
/// line, which matters for ``MemoryCache``'s shards.
// @unchecked: every access to `value` goes through `withLock`, which holds the mutex.
@usableFromInline
package final class LockedValue<Value>: @unchecked Sendable {
    #if canImport(os)
        @usableFromInline typealias Mutex = os_unfair_lock
    #elseif os(Linux)
        /// 0 unlocked, 1 locked, 2 locked with threads that may be asleep waiting for it.
        @usableFromInline typealias Mutex = Atomic<UInt32>
    #else
        @usableFromInline typealias Mutex = pthread_mutex_t
    #endif

    /// The mutex and a pointer to the value, without the object around them.
    ///
    /// Copying it retains nothing, so a hot path can keep many in a plain buffer (see
    /// ``MemoryCache``). Valid while the ``LockedValue`` that handed it out is alive.
    @usableFromInline
    package struct Handle {
        // Only `withLock` may touch these; they are visible to inlined code, not to callers.
        @usableFromInline let mutex: UnsafeMutablePointer<Mutex>
        @usableFromInline let value: UnsafeMutablePointer<Value>

        @inlinable
        init(mutex: UnsafeMutablePointer<Mutex>, value: UnsafeMutablePointer<Value>) {
            self.mutex = mutex
            self.value = value
        }

        /// Runs `body` with exclusive access to the value.
        @inlinable @inline(__always)
        package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            #if canImport(os)
                os_unfair_lock_lock(mutex)
                defer { os_unfair_lock_unlock(mutex) }
            #elseif os(Linux)
                if !mutex.pointee.compareExchange(
                    expected: 0, desired: 1, successOrdering: .acquiring, failureOrdering: .relaxed
                ).exchanged {
                    lockContended(mutex)
                }
                defer { if mutex.pointee.exchange(0, ordering: .releasing) != 1 { wakeWaiter(mutex) } }
            #else
                pthread_mutex_lock(mutex)
                defer { pthread_mutex_unlock(mutex) }
            #endif
            return try body(&value.pointee)
        }
    }

    @usableFromInline package let handle: Handle

    /// Where the value starts in the allocation: after the mutex, at the value's alignment.
    private static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<Mutex>.size + alignment - 1) / alignment * alignment
    }

    private static var byteCount: Int { (valueOffset + MemoryLayout<Value>.size + 127) / 128 * 128 }

    @usableFromInline
    package init(_ value: Value) {
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: Self.byteCount, alignment: max(128, MemoryLayout<Value>.alignment))
        let mutex = block.bindMemory(to: Mutex.self, capacity: 1)
        #if canImport(os)
            mutex.initialize(to: os_unfair_lock())
        #elseif os(Linux)
            mutex.initialize(to: Atomic(0))
        #else
            mutex.initialize(to: pthread_mutex_t())
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            #if canImport(Glibc)
                // Spin briefly before sleeping: the critical sections are a few hundred
                // nanoseconds, and a futex sleep and wake-up cost microseconds.
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            #endif
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        #endif
        let pointer = (block + Self.valueOffset).bindMemory(to: Value.self, capacity: 1)
        pointer.initialize(to: value)
        handle = Handle(mutex: mutex, value: pointer)
    }

    deinit {
        #if !canImport(os) && !os(Linux)
            pthread_mutex_destroy(handle.mutex)
        #endif
        handle.value.deinitialize(count: 1)
        handle.mutex.deinitialize(count: 1)
        UnsafeMutableRawPointer(handle.mutex).deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try handle.withLock(body)
    }
}

#if os(Linux)
    /// How many times a thread that finds a ``LockedValue`` taken checks it again, pausing in
    /// between, before it sleeps on the futex.
    ///
    /// A sleep and its wake-up cost microseconds, far more than a memory-tier critical section
    /// (a hit is about 100 ns, LRU's replay of its read buffer a few microseconds): the default
    /// glibc mutex, which sleeps at once, halved two threads' hits per second on a shared
    /// ``MemoryCache``. A thousand `pause`s (about 5–50 µs, by processor) bound the time burnt
    /// when the owner has been preempted.
    @usableFromInline let lockSpinLimit = 1000

    /// The contended path of ``LockedValue``'s lock: spin, then sleep until the word is free.
    ///
    /// A futex mutex as in Drepper's "Futexes Are Tricky" (mutex 2): a sleeper marks the word 2
    /// so that the unlocking thread knows to wake one. A thread that took the lock after
    /// sleeping keeps it marked 2, since others may still be asleep: at worst one wake-up too
    /// many.
    @usableFromInline @inline(never)
    func lockContended(_ word: UnsafeMutablePointer<Atomic<UInt32>>) {
        for _ in 0..<lockSpinLimit {
            stash_spin_pause()
            if word.pointee.load(ordering: .relaxed) == 0,
                word.pointee.compareExchange(
                    expected: 0, desired: 1, successOrdering: .acquiring, failureOrdering: .relaxed
                ).exchanged
            {
                return
            }
        }
        let address = UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self)
        while word.pointee.exchange(2, ordering: .acquiring) != 0 {
            stash_futex_wait(address, 2)
        }
    }

    /// Wakes one thread asleep in ``lockContended(_:)``, after the unlocking thread found the
    /// word marked 2.
    @usableFromInline @inline(never)
    func wakeWaiter(_ word: UnsafeMutablePointer<Atomic<UInt32>>) {
        stash_futex_wake_one(UnsafeMutableRawPointer(word).assumingMemoryBound(to: UInt32.self))
    }
#endif
