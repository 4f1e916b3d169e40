import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends HTTP requests for a ``ResourceLoader`` and streams their bodies back.
///
/// ``URLSessionTransport`` is the implementation for real use; tests may inject faults with
/// their own.
///
/// A transport calls `onResponse` once, when the status and headers have arrived, then
/// `onData` with each chunk of the body in order, never concurrently, and returns after the
/// last chunk. If either closure throws, the transport stops the transfer and rethrows that
/// error. Cancelling the calling task stops the transfer and throws `CancellationError`.
/// A transport never caches: the loader does. It sends the request's headers as given (the
/// loader adds `If-None-Match`, `If-Modified-Since`, and `Range` + `If-Range` to resume a partial
/// download) and reports every status as it is, a `206 Partial Content` included; the body
/// chunks delivered before a failure are what the loader keeps to resume from.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and streams the response.
    ///
    /// - Parameters:
    ///   - request: The request, with any conditional headers the loader added.
    ///   - onResponse: Called once with the response head.
    ///   - onData: Called with each body chunk, in order.
    /// - Returns: The response, after its whole body was delivered.
    /// - Throws: The transport's error (such as a `URLError`) when the transfer fails,
    ///   `CancellationError` when the task was cancelled, or what a closure threw.
    func send(
        _ request: URLRequest,
        onResponse: @escaping @Sendable (HTTPURLResponse) throws -> Void,
        onData: @escaping @Sendable (Data) throws -> Void
    ) async throws -> HTTPURLResponse
}
