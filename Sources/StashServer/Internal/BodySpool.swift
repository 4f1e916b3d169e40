#if Serve
    import Foundation
    import NIOCore

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    #if canImport(Glibc)
        private let closeDescriptor = Glibc.close
    #elseif canImport(Darwin)
        private let closeDescriptor = Darwin.close
    #endif

    /// Collects a response body that is being relayed, to store it once complete: in memory up to a
    /// limit, then in a temporary file, so that a large body never sits whole in memory.
    final class BodySpool {
        private let memoryLimit: Int
        private let directory: URL
        /// The body so far, while it fits in memory.
        private(set) var buffer: ByteBuffer?
        /// The file holding the body, once it outgrew memory.
        private(set) var file: URL?
        private var descriptor: Int32 = -1
        private(set) var length = 0
        private var failed = false

        /// - Parameter expectedLength: The body's `Content-Length`, if known: a body that fits in
        ///   memory is then collected in a buffer of exactly its length, which the memory tier keeps
        ///   as it is instead of copying it (see ``ResponseStore``).
        init(memoryLimit: Int, directory: URL, expectedLength: Int? = nil) {
            self.memoryLimit = memoryLimit
            self.directory = directory
            if let expectedLength, expectedLength > 0, expectedLength <= memoryLimit {
                // Above the mmap threshold, memory that an earlier large body used (``LargeBuffers``).
                let allocator =
                    expectedLength > Int(MemoryFootprint.mmapThreshold) ? LargeBuffers.allocator : ByteBufferAllocator()
                self.buffer = allocator.buffer(capacity: expectedLength)
            } else {
                self.buffer = ByteBuffer()
            }
        }

        /// Adds a chunk; `false` when the body can no longer be stored (over `limit`, or the
        /// temporary file failed), after which the spool holds nothing.
        func append(_ chunk: ByteBuffer, limit: Int) -> Bool {
            guard !failed else { return false }
            length += chunk.readableBytes
            guard length <= limit else {
                discard()
                return false
            }
            if buffer != nil, length <= memoryLimit {
                // In place: a copy of the buffer in a local variable would share its storage with
                // this property, and the write would then copy the whole body so far (each chunk).
                var chunk = chunk
                buffer!.writeBuffer(&chunk)
                return true
            }
            if descriptor < 0 {
                let url = directory.appendingPathComponent("spool-\(UUID().uuidString)")
                descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else {
                    discard()
                    return false
                }
                file = url
                let pending = buffer
                buffer = nil
                if let pending, !writeAll(pending) {
                    discard()
                    return false
                }
            }
            guard writeAll(chunk) else {
                discard()
                return false
            }
            return true
        }

        private func writeAll(_ bytes: ByteBuffer) -> Bool {
            bytes.withUnsafeReadableBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { return false }
                    offset += written
                }
                return true
            }
        }

        /// Closes the temporary file (if any) so that it can be moved into the cache.
        func close() {
            if descriptor >= 0 {
                _ = closeDescriptor(descriptor)
                descriptor = -1
            }
        }

        /// Drops what was collected and removes the temporary file.
        func discard() {
            failed = true
            buffer = nil
            close()
            if let file { try? FileManager.default.removeItem(at: file) }
            file = nil
        }
    }
#endif
