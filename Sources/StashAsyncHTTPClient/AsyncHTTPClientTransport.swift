#if AsyncHTTPClient
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash
    import StashHTTP

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// An `HTTPTransport` over async-http-client (SwiftNIO), for servers and command-line
    /// tools on Linux.
    ///
    /// ```swift
    /// let loader = ResourceLoader(cache: cache, transport: AsyncHTTPClientTransport())
    /// ```
    ///
    /// Each chunk of a body is handed to the loader as it arrives, and the next one is read only
    /// after the loader has written it to its download file: async-http-client's body sequence
    /// applies back-pressure, so a large body is never held in memory, however slow the disk.
    ///
    /// The transport keeps the contract the loader relies on, the same as
    /// `URLSessionTransport`'s:
    /// * **Cancellation**: cancelling the calling task cancels the request and throws
    ///   `CancellationError`.
    /// * **Timeouts**: the request's `timeoutInterval` is an idle timeout, as with `URLSession`: the
    ///   transfer fails with `URLError(.timedOut)` when no response head or body bytes arrived for
    ///   that long.
    /// * **Redirects** are followed (up to ``Configuration/maximumRedirects``); the response's `url`
    ///   is the last one.
    /// * **Errors** are `URLError`s with the codes `URLSession` uses for the same failure (a refused
    ///   connection is `.cannotConnectToHost`, a connection closed mid-body `.networkConnectionLost`),
    ///   the async-http-client or NIO error as `NSUnderlyingErrorKey`, so that the loader's
    ///   `ResourceLoader/RetryPolicy` retries the same failures whichever transport runs.
    /// * **Content codings**: `gzip` and `deflate` bodies are decoded (the request says it accepts
    ///   them unless it sets its own `Accept-Encoding`).
    ///
    /// The transport owns its `HTTPClient` and shuts it down when it is released, unless you pass
    /// your own (an application's shared client), which stays yours to configure and shut down.
    public final class AsyncHTTPClientTransport: HTTPTransport {
        /// Settings of a transport that creates its own client.
        public struct Configuration: Sendable {
            /// The most redirects followed for one request; one more fails the request with
            /// `URLError(.httpTooManyRedirects)`.
            ///
            /// Defaults to 10. `0` makes redirects reach the loader as responses (a 3xx is then an
            /// unacceptable status).
            public var maximumRedirects: Int
            /// How long establishing a connection (including TLS) may take.
            ///
            /// Defaults to 10 seconds. The request's `timeoutInterval` also applies to it.
            public var connectTimeout: Duration
            /// The most connections kept open to one host.
            ///
            /// Defaults to 8. A `ResourceLoader` opens at most its
            /// `ResourceLoader/Configuration/maximumConcurrentTransfers`.
            public var maximumConnectionsPerHost: Int
            /// How long an unused connection stays in the pool.
            ///
            /// Defaults to 60 seconds.
            public var idleConnectionTimeout: Duration

            /// Creates settings.
            ///
            /// - Parameters:
            ///   - maximumRedirects: The most redirects followed. Defaults to 10.
            ///   - connectTimeout: The longest a connection may take. Defaults to 10 seconds.
            ///   - maximumConnectionsPerHost: The most connections to one host. Defaults to 8.
            ///   - idleConnectionTimeout: How long an unused connection stays open. Defaults to 60 seconds.
            public init(
                maximumRedirects: Int = 10,
                connectTimeout: Duration = .seconds(10),
                maximumConnectionsPerHost: Int = 8,
                idleConnectionTimeout: Duration = .seconds(60)
            ) {
                self.maximumRedirects = maximumRedirects
                self.connectTimeout = connectTimeout
                self.maximumConnectionsPerHost = maximumConnectionsPerHost
                self.idleConnectionTimeout = idleConnectionTimeout
            }
        }

        /// The client that sends the requests.
        public let client: HTTPClient
        private let ownsClient: Bool

        /// Creates a transport with its own client on NIO's shared event loops.
        ///
        /// The client is shut down when the transport is released.
        ///
        /// - Parameter configuration: Redirects, timeouts and the connection pool. Defaults to
        ///   ``Configuration/init(maximumRedirects:connectTimeout:maximumConnectionsPerHost:idleConnectionTimeout:)``'s
        ///   defaults.
        /// - Precondition: `maximumRedirects`, `maximumConnectionsPerHost` and the durations are not
        ///   negative, and `maximumConnectionsPerHost` is positive.
        public init(configuration: Configuration = Configuration()) {
            precondition(
                configuration.maximumRedirects >= 0 && configuration.maximumConnectionsPerHost > 0
                    && configuration.connectTimeout >= .zero && configuration.idleConnectionTimeout >= .zero,
                "AsyncHTTPClientTransport needs maximumRedirects >= 0, maximumConnectionsPerHost > 0 and durations >= 0."
            )
            var settings = HTTPClient.Configuration(
                redirectConfiguration: configuration.maximumRedirects == 0
                    ? .disallow : .follow(max: configuration.maximumRedirects, allowCycles: false),
                timeout: .init(connect: TimeAmount(configuration.connectTimeout)),
                // No ratio limit: the loader bounds the decoded bytes with its maximum response size as
                // they arrive, and a legitimately repetitive body easily compresses 500 to 1.
                decompression: .enabled(limit: .none))
            settings.connectionPool = .init(
                idleTimeout: TimeAmount(configuration.idleConnectionTimeout),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConnectionsPerHost)
            // The loader's retry policy decides whether a refused connection is tried again; the
            // pool's own retries would hold the request until the idle timeout instead.
            settings.connectionPool.retryConnectionEstablishment = false
            client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
            ownsClient = true
        }

        /// Creates a transport that sends its requests with `client`, such as an application's shared
        /// client.
        ///
        /// Redirects, decompression and the pool are the client's settings; the request's
        /// `timeoutInterval` still applies. The client stays yours: shut it down after the last
        /// transfer.
        ///
        /// - Parameter client: The client to use.
        public init(client: HTTPClient) {
            self.client = client
            ownsClient = false
        }

        deinit {
            guard ownsClient else { return }
            // Without blocking: in-flight transfers hold the transport, so there are none left.
            client.shutdown(queue: .global()) { _ in }
        }

        /// Sends `request` and streams its body through `onData`, one chunk at a time.
        ///
        /// The request's method, headers and `httpBody` are sent; a body stream is not supported.
        ///
        /// - Throws: A `URLError` when the transfer fails (see the type's documentation for the codes),
        ///   `CancellationError` when the calling task is cancelled, or what `onResponse` or `onData`
        ///   threw.
        public func send(
            _ request: URLRequest,
            onResponse: @escaping @Sendable (HTTPURLResponse) throws -> Void,
            onData: @escaping @Sendable (Data) throws -> Void
        ) async throws -> HTTPURLResponse {
            let outgoing = try Self.clientRequest(for: request)
            let idleTimeout = request.timeoutInterval > 0 ? Duration.seconds(request.timeoutInterval) : nil
            let activity = IdleWatchdog(timeout: idleTimeout)
            do {
                return try await activity.run {
                    try await self.transfer(outgoing, activity: activity, onResponse: onResponse, onData: onData)
                }
            } catch {
                throw TransportErrors.translate(error, url: request.url)
            }
        }

        private func transfer(
            _ request: HTTPClientRequest,
            activity: IdleWatchdog,
            onResponse: @Sendable (HTTPURLResponse) throws -> Void,
            onData: @Sendable (Data) throws -> Void
        ) async throws -> HTTPURLResponse {
            let response = try await client.execute(request, deadline: .distantFuture)
            activity.touch()
            let head = try Self.urlResponse(response, requestedURL: request.url)
            do {
                try onResponse(head)
            } catch {
                throw CallerFailure(error: error)
            }
            for try await buffer in response.body {
                activity.touch()
                do {
                    try onData(Data(buffer.readableBytesView))
                } catch {
                    throw CallerFailure(error: error)
                }
            }
            return head
        }

        /// The async-http-client request for a `URLRequest`.
        static func clientRequest(for request: URLRequest) throws -> HTTPClientRequest {
            guard let url = request.url, let scheme = url.scheme?.lowercased() else {
                throw URLError(.badURL, userInfo: [NSLocalizedDescriptionKey: "The request has no URL."])
            }
            guard scheme == "http" || scheme == "https" else {
                throw URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url])
            }
            guard request.httpBodyStream == nil else {
                throw URLError(
                    .unsupportedURL,
                    userInfo: [
                        NSURLErrorFailingURLErrorKey: url,
                        NSLocalizedDescriptionKey: "AsyncHTTPClientTransport sends httpBody, not httpBodyStream.",
                    ])
            }
            var outgoing = HTTPClientRequest(url: url.absoluteString)
            outgoing.method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
            for (name, value) in request.allHTTPHeaderFields ?? [:] {
                outgoing.headers.add(name: name, value: value)
            }
            if let body = request.httpBody {
                outgoing.body = .bytes(ByteBuffer(bytes: body))
            }
            return outgoing
        }

        /// The `HTTPURLResponse` for a response head: the URL after redirects, repeated header fields
        /// joined with commas (RFC 9110, 5.3).
        static func urlResponse(_ response: HTTPClientResponse, requestedURL: String) throws -> HTTPURLResponse {
            var fields: [String: String] = [:]
            var names: [String: String] = [:]  // lowercased name -> the spelling first seen
            for (name, value) in response.headers {
                let folded = name.lowercased()
                if let first = names[folded] {
                    fields[first] = fields[first].map { "\($0), \(value)" } ?? value
                } else {
                    names[folded] = name
                    fields[name] = value
                }
            }
            guard let url = response.url ?? URL(string: requestedURL),
                let head = HTTPURLResponse(
                    url: url, statusCode: Int(response.status.code),
                    httpVersion: "HTTP/\(response.version.major).\(response.version.minor)", headerFields: fields)
            else {
                throw URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "Unusable response head."])
            }
            return head
        }
    }

    extension TimeAmount {
        fileprivate init(_ duration: Duration) {
            let (seconds, attoseconds) = duration.components
            self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }
#endif
