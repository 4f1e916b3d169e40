import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Streaming for large bodies: a body read chunk by chunk into a sink, and stored from a sequence
// of chunks, so that neither side holds it whole. A tier that implements only the `Data`-based
// methods gets both from the defaults below (which do hold the body in memory).

/// Everything a ``SharedTier`` keeps about an entry except its body.
public struct SharedEntryHead: Sendable, Hashable {
    /// The entry's key, verbatim.
    public var key: String
    /// The body's length in bytes.
    public var size: Int
    /// Content type, HTTP validators and other strings stored with the body.
    public var metadata: DiskCache.Metadata
    /// When the entry was stored.
    public var created: Date
    /// When the entry expires, or `nil` to keep it until the tier's limit trims it.
    public var expires: Date?

    /// Creates a head.
    ///
    /// - Parameters:
    ///   - key: The key, verbatim.
    ///   - size: The body's length in bytes. A streamed store whose body turns out longer or
    ///     shorter is refused.
    ///   - metadata: Metadata to store with it. Defaults to none.
    ///   - created: When it was stored. Defaults to now.
    ///   - expires: When it expires. Defaults to `nil`: the tier's own default time-to-live.
    public init(
        key: String, size: Int, metadata: DiskCache.Metadata = DiskCache.Metadata(), created: Date = Date(),
        expires: Date? = nil
    ) {
        self.key = key
        self.size = size
        self.metadata = metadata
        self.created = created
        self.expires = expires
    }

    /// The head of `entry`.
    ///
    /// - Parameter entry: An entry with its body.
    public init(_ entry: SharedEntry) {
        self.init(
            key: entry.key, size: entry.body.count, metadata: entry.metadata, created: entry.created,
            expires: entry.expires)
    }
}

/// Where ``SharedTier/streamEntry(forKey:into:)`` delivers an entry: its head first, then its
/// body in order, chunk by chunk.
///
/// The tier verifies the body only once it has delivered all of it: a sink must keep what it
/// received aside (a temporary file, a buffer) until `streamEntry` returns the head, and
/// discard it when `streamEntry` returns `nil` or throws.
public protocol SharedBodySink: Sendable {
    /// Receives the entry's head before any of its body.
    ///
    /// - Parameter head: The key, size, metadata and expiry.
    /// - Returns: `true` to receive the body; `false` to stop (`streamEntry` then returns `nil`
    ///   without reading the body), for example for a stale entry.
    /// - Throws: To stop; `streamEntry` rethrows the error.
    func begin(_ head: SharedEntryHead) async throws -> Bool

    /// Receives the next chunk of the body.
    ///
    /// - Parameter chunk: Bytes that follow the previous chunk; never empty.
    /// - Throws: To stop; `streamEntry` rethrows the error.
    func append(_ chunk: Data) async throws
}

extension SharedTier {
    /// Reads the entry under `key` through `sink` with the tier's `Data`-based
    /// ``entry(forKey:)``, in one chunk: the body is held in memory.
    ///
    /// - Parameters:
    ///   - key: A non-empty key, compared byte for byte.
    ///   - sink: Receives the head, then the body.
    /// - Returns: The head once the whole body was delivered; `nil` on a miss or when the sink
    ///   declined the entry.
    /// - Throws: What ``entry(forKey:)`` or the sink throws.
    /// - Complexity: As ``entry(forKey:)``.
    public func streamEntry<Sink: SharedBodySink>(forKey key: String, into sink: Sink) async throws
        -> SharedEntryHead?
    {
        guard let entry = try await entry(forKey: key) else { return nil }
        let head = SharedEntryHead(entry)
        guard try await sink.begin(head) else { return nil }
        if !entry.body.isEmpty { try await sink.append(entry.body) }
        return head
    }

    /// Stores a body that arrives in chunks by collecting it and calling ``store(_:)``: the
    /// body is held in memory.
    ///
    /// - Parameters:
    ///   - head: The key, size, metadata and expiry.
    ///   - body: The body's bytes, in order; `head.size` of them in all.
    /// - Throws: `StashError` with `StashError.Code.invalidArgument` when `body` is longer or
    ///   shorter than `head.size` (nothing is stored), what `body` throws, and what
    ///   ``store(_:)`` throws.
    /// - Complexity: As ``store(_:)``.
    public func store<Body: AsyncSequence & Sendable>(_ head: SharedEntryHead, body: Body)
        async throws where Body.Element == Data
    {
        var data = Data()
        data.reserveCapacity(head.size)
        for try await chunk in body {
            data.append(chunk)
            if data.count > head.size { throw SharedEntryHead.sizeMismatch(head, received: data.count) }
        }
        guard data.count == head.size else { throw SharedEntryHead.sizeMismatch(head, received: data.count) }
        try await store(
            SharedEntry(
                key: head.key, body: data, metadata: head.metadata, created: head.created, expires: head.expires))
    }

    /// Stores the file at `fileURL` under `head.key`, read chunk by chunk (see
    /// ``store(_:body:)``).
    ///
    /// - Parameters:
    ///   - head: The key, metadata and expiry, and the file's size.
    ///   - fileURL: The file; it is read, never moved or changed.
    /// - Throws: `StashError` with `StashError.Code.notFound` when the file cannot be opened,
    ///   `StashError.Code.invalidArgument` when its length is not `head.size`, and what
    ///   ``store(_:body:)`` throws.
    /// - Complexity: As ``store(_:body:)``, plus O(*n*) to read the file.
    public func store(_ head: SharedEntryHead, bodyFromFileAt fileURL: URL) async throws {
        try await store(head, body: try SharedFileBody(fileAt: fileURL))
    }
}

extension SharedEntryHead {
    /// The error for a streamed body whose length is not the head's `size`.
    ///
    /// - Parameters:
    ///   - head: The head announcing the size.
    ///   - received: How many bytes the body had (at least) when the mismatch was noticed.
    /// - Returns: A `StashError` with `StashError.Code.invalidArgument`.
    public static func sizeMismatch(_ head: SharedEntryHead, received: Int) -> StashError {
        StashError(
            .invalidArgument,
            "Cannot store '\(head.key)' in the shared tier: its head announced \(head.size) bytes but the body "
                + "\(received > head.size ? "had more than that" : "ended after \(received)"); nothing was stored. "
                + "Pass the body's exact size.")
    }
}

/// The bytes of a file as a sequence of chunks, read as they are asked for, for
/// ``SharedTier/store(_:body:)``.
public struct SharedFileBody: AsyncSequence, Sendable {
    /// Each chunk.
    public typealias Element = Data

    /// The file.
    public let fileURL: URL
    /// The largest chunk, in bytes.
    public let chunkSize: Int

    /// A sequence over the file at `fileURL`.
    ///
    /// - Parameters:
    ///   - fileURL: A regular file. It is opened when the sequence is iterated.
    ///   - chunkSize: The largest chunk. Defaults to 1 MiB.
    /// - Throws: `StashError` with `StashError.Code.invalidArgument` for a `chunkSize` below 1.
    public init(fileAt fileURL: URL, chunkSize: Int = 1 << 20) throws {
        guard chunkSize > 0 else {
            throw StashError(.invalidArgument, "SharedFileBody needs a chunkSize of at least 1, not \(chunkSize).")
        }
        self.fileURL = fileURL
        self.chunkSize = chunkSize
    }

    /// Opens nothing yet; the first `next()` opens the file.
    ///
    /// - Returns: An iterator from the file's first byte.
    public func makeAsyncIterator() -> Iterator { Iterator(path: fileURL.path, chunkSize: chunkSize) }

    /// Reads the file one chunk per `next()`.
    public struct Iterator: AsyncIteratorProtocol {
        private let path: String
        private let chunkSize: Int
        private var file: OpenFile?
        private var isFinished = false

        init(path: String, chunkSize: Int) {
            self.path = path
            self.chunkSize = chunkSize
        }

        /// The next chunk, or `nil` at the end of the file.
        ///
        /// - Throws: `StashError` with `StashError.Code.notFound` when the file cannot be
        ///   opened, `StashError.Code.io` when a read fails.
        /// - Complexity: O(*c*) for a chunk of *c* bytes.
        public mutating func next() async throws(any Error) -> Data? {
            guard !isFinished else { return nil }
            if file == nil { file = try OpenFile(path: path) }
            let chunk = try file!.read(upTo: chunkSize)
            if chunk.isEmpty {
                isFinished = true
                file = nil
                return nil
            }
            return chunk
        }
    }

    /// An open file descriptor, closed with its last reference.
    final class OpenFile {
        private let descriptor: Int32
        private let path: String

        init(path: String) throws {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            self.path = path
            guard descriptor >= 0 else {
                throw StashError(
                    .notFound, "Cannot open \(path) to store it in the shared tier: check that it exists.",
                    cause: POSIXFile.error("open \(path)"))
            }
        }

        deinit { close(descriptor) }

        func read(upTo count: Int) throws -> Data {
            var data = Data(count: count)
            var filled = 0
            try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
                while filled < count {
                    let n = readBytes(descriptor, buffer.baseAddress! + filled, count - filled)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw StashError(
                            .io, "Cannot read \(path) to store it in the shared tier.",
                            cause: POSIXFile.error("read \(path)"))
                    }
                    if n == 0 { break }
                    filled += n
                }
            }
            data.count = filled
            return data
        }
    }
}

/// `read(2)`, named apart from ``SharedFileBody/OpenFile/read(upTo:)``.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// An XXH64 checksum computed over a body that arrives in chunks; equal to
/// ``SharedEntry/checksum(of:)`` of the whole body.
public struct SharedBodyChecksum: Sendable {
    private var hasher = Checksum()

    /// An empty checksum.
    public init() {}

    /// Adds the next chunk.
    ///
    /// - Parameter chunk: Bytes that follow the previous chunk.
    /// - Complexity: O(*n*) in the chunk's length.
    public mutating func update(_ chunk: Data) {
        chunk.withUnsafeBytes { hasher.update($0) }
    }

    /// The checksum of every chunk added so far.
    ///
    /// - Complexity: O(1).
    public var value: UInt64 { hasher.finalize() }
}
