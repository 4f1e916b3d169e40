#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A URL's stored partial content (RFC 9111 §3.3): the fields of the newest `206` stored for it
    /// and the runs of bytes its pieces hold, kept one after another as one body under
    /// ``ResponseStore/partialKey(base:)``, in every tier like any stored response.
    struct PartialEntry: Sendable {
        /// The stored entry: status `206`, its body the held runs in order.
        let found: ResponseStore.Found
        let completeLength: Int
        /// The held bytes of the representation: sorted, disjoint, not adjacent.
        let runs: [ClosedRange<Int>]
        /// The entry as a complete response of ``completeLength`` bytes (status `200`, no body),
        /// for freshness, preconditions and `Range` evaluation; only ranges inside ``runs`` are
        /// ever served from it.
        let view: CachedResponse

        init?(_ found: ResponseStore.Found) {
            let response = found.response
            guard response.status == 206, response.varyValues.isEmpty,
                let held = response.headers.first(name: PartialContent.heldField).flatMap(PartialContent.parseHeld),
                held.runs.reduce(0, { $0 + $1.count }) == response.bodyLength
            else { return nil }
            self.found = found
            self.completeLength = held.completeLength
            self.runs = held.runs
            var headers = response.headers
            headers.remove(name: PartialContent.heldField)
            headers.replaceOrAdd(name: "Content-Length", value: String(held.completeLength))
            self.view = CachedResponse(
                status: 200, headers: headers, varyValues: [:], requestTime: response.requestTime,
                responseTime: response.responseTime, body: nil, bodyLength: held.completeLength)
        }

        var validator: PartialContent.Validator { PartialContent.validator(view.headers) }

        /// Where the bytes `range` of the representation are in the stored body, or `nil` when
        /// they are not all held.
        func bodyRange(of range: ClosedRange<Int>) -> ClosedRange<Int>? {
            var offset = 0
            for run in runs {
                if run.contains(range.lowerBound) {
                    guard run.contains(range.upperBound) else { return nil }
                    let start = offset + range.lowerBound - run.lowerBound
                    return start...(start + range.count - 1)
                }
                offset += run.count
            }
            return nil
        }

        /// Reads `count` bytes from `offset` of the stored body.
        ///
        /// Reads a disk-tier file: run it off the event loops. `nil` when they cannot be read.
        func bytes(at offset: Int, count: Int) -> ByteBuffer? {
            Self.read(
                body: found.response.body, descriptor: found.entry?.fileDescriptor, file: found.file, at: offset,
                count: count)
        }

        /// Reads `count` bytes from `offset` of a body held in memory, in an open file or in a file.
        ///
        /// `nil` when they cannot be read. Blocks on a file: run it off the event loops.
        static func read(body: ByteBuffer?, descriptor: Int32? = nil, file: URL?, at offset: Int, count: Int)
            -> ByteBuffer?
        {
            if let body { return body.getSlice(at: body.readerIndex + offset, length: count) }
            if let descriptor { return read(descriptor, at: offset, count: count) }
            if let file {
                let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { return nil }
                defer { _ = close(descriptor) }
                return read(descriptor, at: offset, count: count)
            }
            return nil
        }

        private static func read(_ descriptor: Int32, at offset: Int, count: Int) -> ByteBuffer? {
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            guard count > 0 else { return buffer }
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw -> Int in
                var done = 0
                while done < count {
                    let n = pread(descriptor, raw.baseAddress! + done, count - done, off_t(offset + done))
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { break }
                    done += n
                }
                return done
            }
            return read == count ? buffer : nil
        }
    }

    extension ResponseStore {
        /// The key of a URL's partial entry: under its base key, so that a purge of the URL's
        /// prefix removes it with the URL's other entries.
        static func partialKey(base: String) -> String { base + "\npartial" }

        /// The partial content stored for a URL in any tier, or `nil`.
        func partial(base: String) async -> PartialEntry? {
            guard let found = await lookUp(base: Self.partialKey(base: base), requestHeaders: HTTPHeaders()) else {
                return nil
            }
            return PartialEntry(found)
        }

        /// Removes a URL's partial entry from every tier.
        func removePartial(base: String) async {
            let key = Self.partialKey(base: base)
            _ = memory.removeValue(forKey: key)
            await removeStored(key: key)
        }
    }
#endif
