#if Serve
    import Foundation
    import NIOCore
    @testable import StashServer
    import Testing

    /// The memory of bodies above the mmap threshold is reused, within its bound, and a body
    /// collected in it reads back whole.
    @Suite(.serialized)
    struct ServeLargeBuffersTests {
        /// A buffer freed while the pool has room is what the next buffer of its capacity gets,
        /// with its bytes intact until then; what the pool keeps never exceeds its limit.
        @Test func freedMemoryServesTheNextBufferAndThePoolStaysBounded() {
            let capacity = 1 << 21  // a capacity no other test's body gets
            var first: ByteBuffer? = LargeBuffers.allocator.buffer(capacity: capacity)
            let address = first!.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
            let before = LargeBuffers.pooledBlocks(capacity: capacity)
            first = nil
            #expect(LargeBuffers.pooledBlocks(capacity: capacity) == before + 1)
            var second = LargeBuffers.allocator.buffer(capacity: capacity)
            #expect(second.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == address)
            #expect(LargeBuffers.pooledBlocks(capacity: capacity) == before)
            second.writeBytes(Array(repeating: UInt8(7), count: capacity))
            #expect(second.readableBytesView.allSatisfy { $0 == 7 })

            // Four buffers of 2 MiB freed: at most the limit is kept, the rest is unmapped.
            var buffers = (0..<4).map { _ in LargeBuffers.allocator.buffer(capacity: capacity) }
            buffers.removeAll()
            #expect(LargeBuffers.pooledBytes <= LargeBuffers.poolLimit)
        }

        /// A body collected in a spool of its `Content-Length` above the threshold, then grown past
        /// the buffer's capacity (an origin that sent twice what it said: the pool's `reallocate`
        /// moves it into a larger block), keeps every byte.
        @Test func aSpooledLargeBodyKeepsItsBytes() throws {
            let directory = FileManager.default.temporaryDirectory
            let length = 300_000
            let spool = BodySpool(memoryLimit: 1 << 20, directory: directory, expectedLength: length)
            let capacity = try #require(spool.buffer).capacity
            let body = (0..<2 * length).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
            for start in stride(from: 0, to: body.count, by: 16_384) {
                let chunk = ByteBuffer(bytes: body[start..<min(start + 16_384, body.count)])
                #expect(spool.append(chunk, limit: 1 << 20))
            }
            let collected = try #require(spool.buffer)
            #expect(collected.capacity > capacity)
            #expect(Array(collected.readableBytesView) == body)
        }
    }
#endif
