#if Serve
    import NIOCore
    #if canImport(Glibc)
        import Glibc

        // <malloc.h> is not part of the Glibc module.
        @_silgen_name("mallopt") private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
        @_silgen_name("malloc_trim") private func malloc_trim(_ pad: Int) -> Int32
        /// `M_ARENA_MAX` of <malloc.h>.
        private let arenaMaximumParameter: Int32 = -8
        /// `M_MMAP_THRESHOLD` of <malloc.h>.
        private let mmapThresholdParameter: Int32 = -3
    #endif

    /// What keeps the proxy's anonymous memory near its memory tier's limit beyond charging the tier
    /// what its entries really hold: glibc's arenas and the memory free() leaves mapped.
    enum MemoryFootprint {
        /// Limits glibc to two malloc arenas (unless `MALLOC_ARENA_MAX` says otherwise).
        ///
        /// glibc gives a thread that meets a locked arena an arena of its own, up to eight per core:
        /// a body allocated on an event loop and freed by a disk thread leaves free memory in an arena
        /// that other threads do not reuse, so the heap grows with the thread count.
        ///
        /// A thread that allocated before the limit keeps the arena it got: called once the event
        /// loops have started, as ``ProxyServer`` does, the process has four arenas (the main
        /// thread's and those of the threads that started first), and the disk threads share them.
        /// Called before, two arenas held 121 MiB for 110 MiB in use at 100,000 objects where four
        /// held 145 MiB, but memory hits took 5-11 % more CPU (event loops sharing an arena's lock;
        /// 5 interleaved rounds of `run-serve.sh --objects 500`, one build, `MALLOC_ARENA_MAX` 2
        /// against 8), so the limit comes after the event loops.
        static func limitArenas() {
            #if canImport(Glibc)
                if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(arenaMaximumParameter, 2) }
                if getenv("MALLOC_MMAP_THRESHOLD_") == nil { _ = mallopt(mmapThresholdParameter, mmapThreshold) }
            #endif
        }

        /// Allocations from this size up get pages of their own (`M_MMAP_THRESHOLD`), returned to
        /// the system when freed: 128 KiB, glibc's starting value, kept fixed.
        ///
        /// glibc raises the threshold each time such a block is freed, up to 32 MiB, after which
        /// large bodies (the memory tier's 64-512 KiB entries, a spool collecting a miss) come
        /// from the arenas, and what the memory tier evicts stays there as free but mapped memory
        /// between other entries, which `malloc_trim` cannot return. A fixed threshold keeps them
        /// out of the arenas; the price is one `mmap` and `munmap` per large body stored or
        /// evicted, never per hit (hits share the stored buffer).
        static let mmapThreshold: Int32 = 128 * 1024

        /// How often ``trim()`` runs: once a second.
        ///
        /// Between two trims, what the memory tier evicts and what the misses' spools release stays
        /// in the arenas as free, mapped memory, and the peak counts it. At 100,000 objects
        /// (`run-serve.sh --objects 100000 --no-hot`, three runs with the two builds in either
        /// slot) the peak anonymous memory was 113-119 MiB with a trim every second against
        /// 130-132 MiB every 5 seconds, with no more CPU per request (0.92-1.03× in the same
        /// runs) and a lower p99; at 20,000 objects 110 against 126 MiB, with memory hits as fast
        /// (0.97-1.04× per round). A trim took 2.5-6.8 ms on a disk thread during a first pass
        /// (uprobes on `malloc_trim`): under 1 % of one core.
        static let trimInterval: TimeAmount = .seconds(1)

        /// Returns free memory to the system with `malloc_trim(3)`.
        ///
        /// Releases the free memory at the top of each arena and the whole free pages inside them.
        /// Walks every arena: run it off the event loops, once a second (``trimInterval``).
        static func trim() {
            #if canImport(Glibc)
                _ = malloc_trim(0)
            #endif
        }
    }
#endif
