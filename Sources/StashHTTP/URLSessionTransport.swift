import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``HTTPTransport`` over `URLSession`, on Apple platforms and on Linux (FoundationNetworking).
///
/// Bodies stream through a data-task delegate, chunk by chunk, to the loader, which writes
/// them to its own file: `URLSession.bytes(for:)` does not exist in Linux's
/// FoundationNetworking, and `download(from:)` there writes to `/tmp/*.tmp` files that it never
/// removes (and that may be on another file system than the cache).
///
/// URLSession's own cache is disabled (`urlCache = nil`, `.reloadIgnoringLocalCacheData`):
/// the loader is the cache, and a second one would serve or revalidate behind its back.
///
/// - Important: FoundationNetworking on Linux cannot pause a transfer, so a chunk is queued for
///   the delegate as soon as it arrives. The loader writes each chunk to disk as it is
///   delivered, which keeps that queue short whenever the disk is faster than the network.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate: SessionDelegate

    /// Creates a transport with its own session.
    ///
    /// - Parameter configuration: The session settings (timeouts, headers, proxies). A copy is
    ///   used, with `urlCache` set to `nil` and `requestCachePolicy` to
    ///   `.reloadIgnoringLocalCacheData`. Defaults to `.ephemeral`.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let settings = configuration.copy() as! URLSessionConfiguration
        settings.urlCache = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.name = "stash.http.url-session-delegate"
        // One at a time: chunks of a task must arrive in order, and the loader's writes are
        // cheap enough not to need parallelism.
        queue.maxConcurrentOperationCount = 1
        delegate = SessionDelegate()
        session = URLSession(configuration: settings, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Sends `request` and streams its body through `onData`.
    ///
    /// - Throws: A `URLError` when the transfer fails, `CancellationError` when the calling task
    ///   is cancelled, or what `onResponse` or `onData` threw.
    public func send(
        _ request: URLRequest,
        onResponse: @escaping @Sendable (HTTPURLResponse) throws -> Void,
        onData: @escaping @Sendable (Data) throws -> Void
    ) async throws -> HTTPURLResponse {
        var request = request
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let cancellation = LockedValue(Cancellation())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPURLResponse, any Error>) in
                let task = session.dataTask(with: request)
                delegate.register(
                    task.taskIdentifier,
                    SessionDelegate.Handler(onResponse: onResponse, onData: onData, continuation: continuation))
                let started = cancellation.withLock { state -> Bool in
                    guard !state.isCancelled else { return false }
                    state.task = task
                    return true
                }
                if started {
                    task.resume()
                } else if let handler = delegate.unregister(task.taskIdentifier) {
                    handler.continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let task = cancellation.withLock { state -> URLSessionDataTask? in
                state.isCancelled = true
                return state.task
            }
            task?.cancel()
        }
    }

    private struct Cancellation {
        var isCancelled = false
        var task: URLSessionDataTask?
    }
}

/// Routes the session's delegate callbacks to the handler of each task.
// @unchecked: NSObject subclasses cannot be checked; all mutable state is in `handlers`, a lock.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct Handler: Sendable {
        var onResponse: @Sendable (HTTPURLResponse) throws -> Void
        var onData: @Sendable (Data) throws -> Void
        var continuation: CheckedContinuation<HTTPURLResponse, any Error>
        var failure: (any Error)?
        var hasDeliveredResponse = false
    }

    private let handlers = LockedValue([Int: Handler]())

    func register(_ id: Int, _ handler: Handler) {
        handlers.withLock { $0[id] = handler }
    }

    func unregister(_ id: Int) -> Handler? {
        handlers.withLock { $0.removeValue(forKey: id) }
    }

    private func fail(_ id: Int, with error: any Error) {
        handlers.withLock { $0[id]?.failure = error }
    }

    /// Calls `onResponse` once per task, from whichever callback sees the response first.
    ///
    /// That is the response callback, the first chunk, or completion (a body-less response).
    /// Not relying on the response callback alone keeps the transport working if a platform's
    /// delegate signature ever stops matching.
    ///
    /// - Returns: The handler, or `nil` when the task failed or is unknown.
    private func handler(for task: URLSessionTask, response: URLResponse?) -> Handler? {
        let id = task.taskIdentifier
        let (handler, isFirst) = handlers.withLock { handlers -> (Handler?, Bool) in
            guard var handler = handlers[id], handler.failure == nil else { return (nil, false) }
            let isFirst = !handler.hasDeliveredResponse
            handler.hasDeliveredResponse = true
            handlers[id] = handler
            return (handler, isFirst)
        }
        guard let handler else { return nil }
        guard isFirst else { return handler }
        do {
            guard let http = (response ?? task.response) as? HTTPURLResponse else {
                throw URLError(.badServerResponse)
            }
            try handler.onResponse(http)
            return handler
        } catch {
            fail(id, with: error)
            return nil
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        completionHandler(handler(for: dataTask, response: response) == nil ? .cancel : .allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let handler = handler(for: dataTask, response: nil) else { return dataTask.cancel() }
        do {
            try handler.onData(data)
        } catch {
            fail(dataTask.taskIdentifier, with: error)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if error == nil { _ = handler(for: task, response: nil) }
        guard let handler = unregister(task.taskIdentifier) else { return }
        if let failure = handler.failure {
            handler.continuation.resume(throwing: failure)
        } else if let error {
            let cancelled = (error as? URLError)?.code == .cancelled
            handler.continuation.resume(throwing: cancelled ? CancellationError() : error)
        } else if let response = task.response as? HTTPURLResponse {
            handler.continuation.resume(returning: response)
        } else {
            handler.continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}
