#if Serve
    #if canImport(Glibc)
        import Glibc

        // <malloc.h> is not part of the Glibc module.
        @_silgen_name("mallopt") private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
        @_silgen_name("malloc_trim") private func malloc_trim(_ pad: Int) -> Int32
        /// `M_ARENA_MAX` of <malloc.h>.
        private let arenaMaximumParameter: Int32 = -8
    #endif

    /// What keeps the proxy's anonymous memory near its memory tier's limit beyond charging the tier
    /// what its entries really hold: glibc's arenas and the memory free() leaves mapped.
    enum MemoryFootprint {
        /// Limits glibc to two malloc arenas (unless `MALLOC_ARENA_MAX` says otherwise).
        ///
        /// glibc gives a thread that meets a locked arena an arena of its own, up to eight per core:
        /// a body allocated on an event loop and freed by a disk thread leaves free memory in an arena
        /// that other threads do not reuse, so the heap grows with the thread count.
        static func limitArenas() {
            #if canImport(Glibc)
                if getenv("MALLOC_ARENA_MAX") == nil { _ = mallopt(arenaMaximumParameter, 2) }
            #endif
        }

        /// Returns free memory to the system with `malloc_trim(3)`.
        ///
        /// Releases the free memory at the top of each arena and the whole free pages inside them.
        /// Walks every arena: run it off the event loops, every few seconds.
        static func trim() {
            #if canImport(Glibc)
                _ = malloc_trim(0)
            #endif
        }
    }
#endif
