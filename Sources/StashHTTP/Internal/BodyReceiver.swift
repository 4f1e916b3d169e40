import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Collects one response body: in memory while it is below the disk cache's inline threshold
/// (where the cache would keep it in its index anyway), in a ``DownloadFile`` from there on, so
/// that a large body is never held whole in memory.
// @unchecked: the transport calls `begin` and `append` one at a time (HTTPTransport's contract),
// and the loader reads the results only after `send` returned, which orders those accesses.
final class BodyReceiver: @unchecked Sendable {
    /// A complete body.
    enum Body {
        case memory(Data)
        case file(DownloadFile, size: Int)
    }

    private let url: URL
    private let maximumSize: Int
    private let inlineThreshold: Int
    private let downloadsDirectory: String
    private let onProgress: @Sendable (TransferProgress) -> Void
    /// The cache key, which names its partial download.
    private let key: String
    /// The partial download this request resumes (it was sent with `Range`), if any.
    private var resuming: PartialDownload.Found?
    /// Whether a `206` continues ``resuming``.
    private(set) var isResumed = false
    /// Whether ``file`` is the key's partial download, kept when the body stops midway.
    private var isPartial = false

    /// Progress is reported at most once per this many bytes (and at the end): per-chunk work
    /// runs on URLSession's delegate queue, and the slower it is, the more chunks queue up there.
    static let progressInterval = 256 * 1024

    private(set) var response: HTTPURLResponse?
    private(set) var expected: Int?
    private(set) var received = 0
    /// Every body byte delivered, kept or not.
    private(set) var delivered = 0
    private var reported = 0
    /// The most body bytes held in memory at once.
    private(set) var largestBuffered = 0
    private var buffer = Data()
    private var file: DownloadFile?
    private var isKeepingBody = false

    init(
        url: URL, key: String, maximumSize: Int, inlineThreshold: Int, downloadsDirectory: String,
        resuming: PartialDownload.Found? = nil, onProgress: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.url = url
        self.key = key
        self.resuming = resuming
        self.maximumSize = maximumSize
        self.inlineThreshold = inlineThreshold
        self.downloadsDirectory = downloadsDirectory
        self.onProgress = onProgress
    }

    /// Receives the response head.
    ///
    /// Only a 2xx body other than 206 is kept, or a 206 that continues the partial download
    /// being resumed.
    ///
    /// - Throws: `StashError.Code.tooLarge` when the announced length is over the
    ///   maximum; `StashError.Code.io` when the download file cannot be created;
    ///   ``PartialMismatch`` for a 206 that does not continue the partial.
    func begin(_ response: HTTPURLResponse) throws {
        self.response = response
        if response.statusCode == 206, let resuming {
            try resume(resuming, with: response)
            return
        }
        isKeepingBody = (200..<300).contains(response.statusCode) && response.statusCode != 206
        guard isKeepingBody else { return }
        if let resuming {
            // A full body (If-Range did not match, or Range was ignored) supersedes the partial.
            resuming.file.remove()
            PartialDownload.removeRecord(in: downloadsDirectory, key: key)
            self.resuming = nil
        }
        // With a Content-Encoding, URLSession decodes the body, so Content-Length (the encoded
        // length) says nothing about the bytes delivered.
        let encoding = response.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? "identity"
        if encoding == "identity" || encoding.isEmpty, response.expectedContentLength >= 0 {
            expected = Int(response.expectedContentLength)
        }
        if let expected, expected > maximumSize { throw tooLarge(expected, announced: true) }
        if let expected, expected >= inlineThreshold { file = try createFile(for: response, length: expected) }
        onProgress(TransferProgress(bytesReceived: 0, bytesExpected: expected))
    }

    /// A 206 that may continue `partial`: from its length, of the same total, with the same ETag.
    private func resume(_ partial: PartialDownload.Found, with response: HTTPURLResponse) throws {
        let etag = response.value(forHTTPHeaderField: "ETag")
        guard let range = PartialDownload.contentRange(response.value(forHTTPHeaderField: "Content-Range")),
            range.start == partial.size, range.total == partial.record.length,
            etag == nil || etag == partial.record.etag
        else { throw PartialMismatch() }
        if range.total > maximumSize { throw tooLarge(range.total, announced: true) }
        resuming = nil
        file = partial.file
        isPartial = true
        isResumed = true
        isKeepingBody = true
        received = partial.size
        reported = partial.size
        expected = range.total
        onProgress(TransferProgress(bytesReceived: received, bytesExpected: expected))
    }

    /// Receives the next chunk of the body.
    ///
    /// - Throws: `StashError.Code.tooLarge` past the maximum size,
    ///   `StashError.Code.io` when the download file cannot be written.
    func append(_ chunk: Data) throws {
        delivered += chunk.count
        guard isKeepingBody else { return }
        received += chunk.count
        if received > maximumSize { throw tooLarge(received, announced: false) }
        if let file {
            try write(chunk, to: file)
        } else if buffer.count + chunk.count >= inlineThreshold {
            let file = try createFile()
            self.file = file
            try write(buffer, to: file)
            try write(chunk, to: file)
            buffer = Data()
        } else {
            buffer.append(chunk)
            largestBuffered = max(largestBuffered, buffer.count)
        }
        if received - reported >= Self.progressInterval || received == expected {
            reported = received
            onProgress(TransferProgress(bytesReceived: received, bytesExpected: expected))
        }
    }

    /// The complete body, after the transport returned.
    ///
    /// - Throws: `StashError.Code.invalidResponse` when fewer or more bytes arrived than
    ///   `Content-Length` announced.
    func finish() throws -> Body {
        resuming?.file.close()
        resuming = nil
        if let expected, received != expected {
            throw StashError(
                .invalidResponse,
                "GET \(url.absoluteString): the body ended after \(received) of the \(expected) bytes its Content-Length announced; nothing was cached."
            )
        }
        if received != reported {
            reported = received
            onProgress(TransferProgress(bytesReceived: received, bytesExpected: expected))
        }
        if let file {
            if isPartial {
                // Complete: no longer a partial another transfer could resume or restart.
                do {
                    try file.moveToRandomName()
                } catch {
                    throw StashError(
                        .io, "Cannot rename the download file \(file.path) of \(url.absoluteString).", cause: error)
                }
                PartialDownload.removeRecord(in: downloadsDirectory, key: key)
                isPartial = false
            }
            file.close()
            self.file = nil
            return .file(file, size: received)
        }
        return .memory(buffer)
    }

    /// Deletes whatever was received; called on every failure and cancellation.
    ///
    /// - Parameter keepingPartial: Keep a partial download to be resumed (the body stopped
    ///   midway) rather than delete it (it is wrong, or the disk refused it).
    /// - Returns: Whether a partial download was kept.
    @discardableResult
    func discard(keepingPartial: Bool = false) -> Bool {
        let kept = isPartial && keepingPartial && received > 0
        if isPartial && !keepingPartial { PartialDownload.removeRecord(in: downloadsDirectory, key: key) }
        if isPartial && keepingPartial { file?.close() } else { file?.remove() }
        file = nil
        isPartial = false
        // A partial found for this request but not continued stays as it was.
        resuming?.file.close()
        resuming = nil
        buffer = Data()
        return kept
    }

    /// The file for a body of `length` bytes: the key's partial download when the response has
    /// a validator to resume it with (and no other transfer holds it), else a new random file.
    private func createFile(for response: HTTPURLResponse, length: Int) throws -> DownloadFile {
        let record = PartialDownload.record(for: response, key: key, url: url, length: length)
        if let record, response.statusCode == 200 {
            let file: DownloadFile?
            do {
                file = try PartialDownload.start(in: downloadsDirectory, record: record)
            } catch {
                throw StashError(
                    .io,
                    "Cannot create a partial download in \(downloadsDirectory) for \(url.absoluteString): check that the cache directory is writable and the disk has space.",
                    cause: error)
            }
            if let file {
                isPartial = true
                return file
            }
        }
        return try createFile()
    }

    private func createFile() throws -> DownloadFile {
        do {
            return try DownloadFile.create(in: downloadsDirectory)
        } catch {
            throw StashError(
                .io,
                "Cannot create a download file in \(downloadsDirectory) for \(url.absoluteString): check that the cache directory is writable and the disk has space.",
                cause: error)
        }
    }

    private func write(_ data: Data, to file: DownloadFile) throws {
        do {
            try file.write(data)
        } catch {
            throw StashError(
                .io,
                "Cannot write the body of \(url.absoluteString) to \(file.path): free disk space or fix the directory's permissions.",
                cause: error)
        }
    }

    private func tooLarge(_ size: Int, announced: Bool) -> StashError {
        let what =
            announced ? "announces \(ByteCount(size))" : "exceeded \(ByteCount(maximumSize)) after \(ByteCount(size))"
        return StashError(
            .tooLarge,
            "GET \(url.absoluteString): the response \(what), over the maximum response size of \(ByteCount(maximumSize)); raise ResourceLoader.Configuration.maximumResponseSize (and the disk cache's sizeLimit) to load it."
        )
    }
}

/// A `206` that does not continue the partial download it answers (another start, length or
/// ETag): the partial is dropped and the body fetched whole.
struct PartialMismatch: Error {}
