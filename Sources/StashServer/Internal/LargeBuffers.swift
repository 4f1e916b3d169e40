#if Serve
    import NIOConcurrencyHelpers
    @_spi(CustomByteBufferAllocator) import NIOCore

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The memory of bodies above the mmap threshold (``MemoryFootprint/mmapThreshold``), kept for
    /// the next such body when freed, up to ``poolLimit`` bytes.
    ///
    /// glibc gives each of them pages of their own: fresh pages, each faulted in when the body is
    /// copied into them, and unmapped when it is freed (a TLB shootdown on every core). On a first
    /// pass, where every large body is collected once and written to the disk tier, that was about
    /// a tenth of the relay's CPU. Memory taken from here was faulted in by an earlier body and
    /// stays mapped. What is kept is bounded, so it is part of the fixed overhead of the memory
    /// budget (``ProxyServer/Configuration/memoryLimit``), and a body the memory tier keeps
    /// returns its memory here only when it is evicted.
    ///
    /// Each block is one anonymous mapping: a header of ``headerSize`` bytes that records the
    /// mapping's length, then the buffer's capacity. NIO asks for capacities in powers of two, so
    /// a freed block serves the next request of the same capacity.
    enum LargeBuffers {
        /// The most bytes of freed blocks kept for reuse: eight 512 KiB bodies.
        static let poolLimit = 4 << 20
        /// The bytes before a block's buffer, which keep its mapping's length (64: the buffer
        /// stays aligned to a cache line).
        static let headerSize = 64

        /// Allocates from the pool (``ByteBufferAllocator``'s custom allocation functions).
        static let allocator = ByteBufferAllocator(
            allocate: { size in LargeBuffers.allocate(size) },
            reallocate: { pointer, oldSize, newSize in
                guard let new = LargeBuffers.allocate(newSize) else { return nil }
                if let pointer {
                    new.copyMemory(from: pointer, byteCount: min(oldSize, newSize))
                    LargeBuffers.deallocate(pointer)
                }
                return new
            },
            deallocate: { pointer in LargeBuffers.deallocate(pointer) },
            copy: { destination, source, count in destination.copyMemory(from: source, byteCount: count) })

        /// The freed blocks, by mapping length.
        private struct Pool: @unchecked Sendable {
            var free: [Int: [UnsafeMutableRawPointer]] = [:]
            var bytes = 0
        }
        private static let pool = NIOLockedValueBox(Pool())

        /// The number of bytes kept for reuse (for tests).
        static var pooledBytes: Int { pool.withLockedValue { $0.bytes } }

        /// The number of blocks kept for reuse by buffers of `capacity` bytes (for tests).
        static func pooledBlocks(capacity: Int) -> Int {
            pool.withLockedValue { $0.free[capacity + headerSize]?.count ?? 0 }
        }

        /// A buffer of at least `size` bytes: a freed block of the same length, else a new mapping.
        static func allocate(_ size: Int) -> UnsafeMutableRawPointer? {
            let length = size + headerSize
            let reused = pool.withLockedValue { pool -> UnsafeMutableRawPointer? in
                guard let block = pool.free[length]?.popLast() else { return nil }
                pool.bytes -= length
                return block
            }
            if let reused { return reused + headerSize }
            // `MAP_FAILED` is (void *)-1; Darwin's module does not import that macro.
            guard let block = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                block != UnsafeMutableRawPointer(bitPattern: -1)
            else { return nil }
            block.storeBytes(of: length, as: Int.self)
            return block + headerSize
        }

        /// Frees a buffer from ``allocate(_:)``: kept for reuse while the pool has room, else
        /// unmapped.
        static func deallocate(_ pointer: UnsafeMutableRawPointer) {
            let block = pointer - headerSize
            let length = block.load(as: Int.self)
            let kept = pool.withLockedValue { pool -> Bool in
                guard pool.bytes + length <= poolLimit else { return false }
                pool.free[length, default: []].append(block)
                pool.bytes += length
                return true
            }
            if !kept { munmap(block, length) }
        }
    }
#endif
