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
        url: URL, maximumSize: Int, inlineThreshold: Int, downloadsDirectory: String,
        onProgress: @escaping @Sendable (TransferProgress) -> Void
    ) {
        self.url = url
        self.maximumSize = maximumSize
        self.inlineThreshold = inlineThreshold
        self.downloadsDirectory = downloadsDirectory
        self.onProgress = onProgress
    }

    /// Receives the response head.
    ///
    /// Only a 2xx body other than 206 is kept.
    ///
    /// - Throws: ``Stash/StashError/Code/tooLarge`` when the announced length is over the
    ///   maximum; ``Stash/StashError/Code/io`` when the download file cannot be created.
    func begin(_ response: HTTPURLResponse) throws {
        self.response = response
        isKeepingBody = (200..<300).contains(response.statusCode) && response.statusCode != 206
        guard isKeepingBody else { return }
        // With a Content-Encoding, URLSession decodes the body, so Content-Length (the encoded
        // length) says nothing about the bytes delivered.
        let encoding = response.value(forHTTPHeaderField: "Content-Encoding")?.lowercased() ?? "identity"
        if encoding == "identity" || encoding.isEmpty, response.expectedContentLength >= 0 {
            expected = Int(response.expectedContentLength)
        }
        if let expected, expected > maximumSize { throw tooLarge(expected, announced: true) }
        if let expected, expected >= inlineThreshold { file = try createFile() }
        onProgress(TransferProgress(bytesReceived: 0, bytesExpected: expected))
    }

    /// Receives the next chunk of the body.
    ///
    /// - Throws: ``Stash/StashError/Code/tooLarge`` past the maximum size,
    ///   ``Stash/StashError/Code/io`` when the download file cannot be written.
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
    /// - Throws: ``Stash/StashError/Code/invalidResponse`` when fewer or more bytes arrived than
    ///   `Content-Length` announced.
    func finish() throws -> Body {
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
            file.close()
            self.file = nil
            return .file(file, size: received)
        }
        return .memory(buffer)
    }

    /// Deletes whatever was received; called on every failure and cancellation.
    func discard() {
        file?.remove()
        file = nil
        buffer = Data()
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
