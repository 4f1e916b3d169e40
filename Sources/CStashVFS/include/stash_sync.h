#ifndef STASH_SYNC_H
#define STASH_SYNC_H

// What Swift cannot say for the locks and the memory tier: the futex system calls and the spin
// hint behind `LockedValue`'s lock on Linux (Sources/Stash/Internal/Lock.swift; Swift cannot
// call the variadic `syscall(2)`), and a prefetch. They live in the package's one C target.
// Only the lock's contended path calls the futex; its uncontended path is an atomic
// compare-and-swap inlined in Swift.

#if defined(__linux__)
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Sleeps while `*word == expected` (returns at once if it is not), until a wake-up on `word`
/// or a spurious return. The word belongs to this process (`FUTEX_PRIVATE_FLAG`).
static inline void stash_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

/// Wakes one thread sleeping in `stash_futex_wait` on `word`, if any.
static inline void stash_futex_wake_one(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

/// Tells the processor that the caller is spinning on a lock (x86 `pause`, ARM `yield`), which
/// saves power and lets the other hardware thread of the core run.
static inline void stash_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/// Asks the processor to fetch the cache line at `address` in the state for writing, without
/// waiting for it: the memory tier's LRU replays a buffer of hits this way, so that the cache
/// misses of its relinks overlap instead of coming one after another.
static inline void stash_prefetch_for_writing(const void *address) {
    __builtin_prefetch(address, 1, 3);
}

#endif
