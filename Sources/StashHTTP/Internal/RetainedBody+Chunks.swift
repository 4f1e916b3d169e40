import Foundation
import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension RetainedBody {
    /// The file's length.
    ///
    /// - Throws: `StashError` with `StashError.Code.io` when `fstat` fails.
    func size() throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw StashError(
                .io, "Cannot stat a retained body.", cause: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
        }
        return Int(info.st_size)
    }

    /// Up to `count` bytes from `offset`; fewer only at the end of the file.
    ///
    /// - Throws: `StashError` with `StashError.Code.io` when a read fails.
    func read(at offset: Int, upTo count: Int) throws -> Data {
        var data = Data(count: count)
        var filled = 0
        try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            while filled < count {
                let n = pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw StashError(
                        .io, "Cannot read a retained body.", cause: POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
                }
                if n == 0 { break }
                filled += n
            }
        }
        data.count = filled
        return data
    }
}

/// A retained body file as a sequence of chunks, read as the shared tier asks for them: a large
/// download reaches the shared tier without being read into memory whole.
struct RetainedBodyChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let body: RetainedBody
    let chunkSize: Int

    func makeAsyncIterator() -> Iterator { Iterator(body: body, chunkSize: chunkSize) }

    struct Iterator: AsyncIteratorProtocol {
        let body: RetainedBody
        let chunkSize: Int
        var offset = 0

        mutating func next() async throws -> Data? {
            let chunk = try body.read(at: offset, upTo: chunkSize)
            guard !chunk.isEmpty else { return nil }
            offset += chunk.count
            return chunk
        }
    }
}
