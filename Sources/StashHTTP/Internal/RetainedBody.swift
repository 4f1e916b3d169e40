import Foundation
import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A downloaded body file kept open while it is moved into the disk cache, so that its bytes
/// can still be delivered if the cache evicts the entry before anyone reads it.
///
/// An admission policy (the default `EvictionPolicy.adaptive`) may refuse a newcomer
/// at the very next store: the body the caller waited for must reach it all the same, without
/// a second download. The open descriptor keeps the file's bytes alive after the cache has
/// renamed or unlinked the path.
final class RetainedBody: Sendable {
    let descriptor: Int32
    private let path: String

    /// Opens the file at `path` for reading, or returns `nil` when it cannot be opened (the
    /// caller then falls back to reading the cache or downloading again).
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        self.descriptor = fd
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// Every byte of the file, read from the start.
    ///
    /// - Throws: `StashError` with `StashError.Code.io` when a read fails.
    func data() throws -> Data {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(errno) }
        var data = Data(count: Int(info.st_size))
        var offset = 0
        try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            while offset < buffer.count {
                let count = pread(descriptor, base + offset, buffer.count - offset, off_t(offset))
                if count < 0 {
                    if errno == EINTR { continue }
                    throw failure(errno)
                }
                if count == 0 { break }
                offset += count
            }
        }
        guard offset == data.count else {
            throw StashError(
                .io, "The downloaded body at \(path) ended after \(offset) of its \(data.count) bytes.")
        }
        return data
    }

    private func failure(_ code: Int32) -> StashError {
        StashError(
            .io, "Cannot read the downloaded body at \(path).",
            cause: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
    }
}
