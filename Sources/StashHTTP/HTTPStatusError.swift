import Foundation

/// The `StashError.cause` of a `StashError` for a response whose status a
/// ``ResourceLoader`` does not accept, so that callers can match on the status code.
///
/// ```swift
/// if let status = (error as? StashError)?.cause as? HTTPStatusError, status.statusCode == 404 { … }
/// ```
public struct HTTPStatusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status code, such as 404.
    public var statusCode: Int
    /// The URL that answered (after redirects).
    public var url: URL

    /// Creates the error.
    public init(statusCode: Int, url: URL) {
        self.statusCode = statusCode
        self.url = url
    }

    /// `HTTP 404 from https://…`.
    public var description: String { "HTTP \(statusCode) from \(url.absoluteString)" }
}
