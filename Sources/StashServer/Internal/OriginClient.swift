#if Serve
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// The proxy's client for its origin.
    ///
    /// A plain-`http` origin is reached through connections of the proxy's own (see
    /// ``OriginConnectionPool``): HTTP/1.1 with keep-alive, whose response decoder forwards interim
    /// (1xx) heads, so that the proxy can relay `103 (Early Hints)` and the like to its clients
    /// (RFC 9110 §15.2). An `https` origin goes through AsyncHTTPClient, which reads past interim
    /// responses: no 1xx is relayed from one.
    final class OriginClient: Sendable {
        private enum Backend {
            case pool(OriginConnectionPool)
            case asyncHTTPClient(HTTPClient)
        }

        private let backend: Backend
        /// The origin's URL without a trailing slash (for AsyncHTTPClient).
        private let originPrefix: String
        /// The origin's path without a trailing slash, that request targets are appended to.
        private let pathPrefix: String
        /// The `Host` field for the origin (RFC 9112 §3.2: its host, and its port if not the default).
        private let hostField: String

        /// - Parameters:
        ///   - connectTimeout: How long opening a connection may take.
        ///   - readTimeout: How long the origin may send nothing while the proxy waits for bytes.
        ///   - idleTimeout: How long an unused keep-alive connection stays open.
        ///   - maximumConnections: Connections open at once; more requests wait for one.
        init(
            origin: URL, group: any EventLoopGroup, connectTimeout: TimeAmount = .seconds(10),
            readTimeout: TimeAmount = .seconds(60), idleTimeout: TimeAmount = .seconds(60),
            maximumConnections: Int = 256
        ) {
            var prefix = origin.absoluteString
            while prefix.hasSuffix("/") { prefix.removeLast() }
            originPrefix = prefix
            var path = URLComponents(url: origin, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
            while path.hasSuffix("/") { path.removeLast() }
            pathPrefix = path
            let isTLS = origin.scheme?.lowercased() == "https"
            var host = origin.host ?? ""
            if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
            hostField = origin.port.map { "\(host):\($0)" } ?? host
            if isTLS {
                var configuration = HTTPClient.Configuration()
                configuration.redirectConfiguration = .disallow
                configuration.decompression = .disabled
                configuration.connectionPool = .init(
                    idleTimeout: idleTimeout, concurrentHTTP1ConnectionsPerHostSoftLimit: maximumConnections)
                // An origin that refuses connections fails the request at once (a 502, or a stale
                // response under stale-if-error), as nginx does, rather than after retrying for the
                // connect timeout.
                configuration.connectionPool.retryConnectionEstablishment = false
                configuration.timeout = .init(connect: connectTimeout, read: readTimeout)
                backend = .asyncHTTPClient(
                    HTTPClient(eventLoopGroupProvider: .shared(group), configuration: configuration))
            } else {
                let bareHost = origin.host.map { $0.hasPrefix("[") ? String($0.dropFirst().dropLast()) : $0 } ?? ""
                backend = .pool(
                    OriginConnectionPool(
                        group: group, host: bareHost, port: origin.port ?? 80, connectTimeout: connectTimeout,
                        readTimeout: readTimeout, idleTimeout: idleTimeout, maximumConnections: maximumConnections))
            }
        }

        /// The proxy's own connections to a plain-`http` origin; `nil` for an `https` one.
        var pool: OriginConnectionPool? {
            if case .pool(let pool) = backend { return pool }
            return nil
        }

        /// Sends `request` and returns the origin's final response once its head is in; the body
        /// follows through ``OriginResponse/body``.
        ///
        /// RFC 9110 §9.2.2, RFC 9112 §9.3.1: a `GET` or `HEAD` without content whose reused
        /// keep-alive connection closed or was reset before any byte of a response came (the origin
        /// closed it as idle while the request was on its way) is sent once more, on a new
        /// connection. Never after a new connection fails, after an interim response, or for
        /// another method.
        ///
        /// - Parameters:
        ///   - deadline: When the final head must have arrived (``OriginClientError/deadlineExceeded``
        ///     otherwise).
        ///   - interim: Called with each interim (1xx, never `101`) head before the final one.
        func execute(
            _ request: OriginRequest.Message, deadline: NIODeadline,
            interim: (HTTPResponseHead) async -> Void = { _ in }
        ) async throws -> OriginResponse {
            switch backend {
            case .asyncHTTPClient(let client):
                var outgoing = HTTPClientRequest(url: originPrefix + request.target)
                outgoing.method = request.method
                outgoing.headers = request.headers
                if let body = request.body {
                    outgoing.body = .stream(body.sequence, length: request.bodyLength.map { .known($0) } ?? .unknown)
                }
                let response = try await client.execute(outgoing, deadline: deadline)
                return OriginResponse(
                    status: Int(response.status.code), headers: response.headers,
                    body: OriginResponse.Body(response.body))
            case .pool(let pool):
                let retryable = request.body == nil && (request.method == .GET || request.method == .HEAD)
                var (connection, reused) = try await pool.lease(deadline: deadline)
                while true {
                    var answered = false
                    do {
                        let parts = try await connection.start(
                            head: requestHead(request), endsRequest: request.body == nil, deadline: deadline)
                        let reader = OriginResponse.PartReader(parts, handOff: connection.handOff)
                        if let body = request.body {
                            Task { [connection] in await connection.send(body: body.sequence) }
                        }
                        while let part = try await reader.next() {
                            answered = true
                            guard case .head(let head) = part else { break }
                            let code = Int(head.status.code)
                            if (100..<200).contains(code), code != 101 {
                                await interim(head)
                                continue
                            }
                            return OriginResponse(
                                status: code, headers: head.headers, body: OriginResponse.Body(reader))
                        }
                        throw OriginClientError.connectionClosed
                    } catch {
                        guard retryable, reused, !answered, Self.isClosedBeforeResponse(error) else { throw error }
                        (connection, reused) = try await pool.lease(deadline: deadline, fresh: true)
                    }
                }
            }
        }

        /// Whether a failure is the connection closing or being reset, rather than a timeout, a
        /// malformed response, the proxy stopping or the exchange being cancelled.
        static func isClosedBeforeResponse(_ error: any Error) -> Bool {
            if let error = error as? OriginClientError { return error == .connectionClosed }
            return error is IOError || error is ChannelError
        }

        /// The request head as the origin gets it, framed as RFC 9112 §6 asks: `Host` first, and
        /// `Content-Length` or chunked coding for a body (`Content-Length: 0` for a method that
        /// defines content and has none).
        func requestHead(_ request: OriginRequest.Message) -> HTTPRequestHead {
            var headers = HTTPHeaders()
            headers.reserveCapacity(request.headers.count + 2)
            headers.add(name: "Host", value: hostField)
            for (name, value) in request.headers {
                switch name.lowercased() {
                case "host", "content-length", "transfer-encoding": continue
                default: headers.add(name: name, value: value)
                }
            }
            if request.body != nil {
                if let length = request.bodyLength {
                    headers.add(name: "Content-Length", value: String(length))
                } else {
                    headers.add(name: "Transfer-Encoding", value: "chunked")
                }
            } else {
                switch request.method {
                case .GET, .HEAD, .DELETE, .CONNECT, .TRACE: break
                default: headers.add(name: "Content-Length", value: "0")
                }
            }
            return HTTPRequestHead(
                version: .http1_1, method: request.method, uri: pathPrefix + request.target, headers: headers)
        }

        /// Closes every connection; requests still waiting fail.
        func shutdown() async {
            switch backend {
            case .asyncHTTPClient(let client): try? await client.shutdown()
            case .pool(let pool): await pool.shutdown()
            }
        }
    }

    /// The origin's final response: its head, and its body as it arrives.
    struct OriginResponse: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Body

        /// Reads the parts of one answer; one task reads at a time (the exchange's).
        final class PartReader: @unchecked Sendable {
            private var iterator: OriginParts.AsyncIterator
            private let handOff: HandOffFence

            /// Reads `parts`, which the connection yields after passing `handOff`.
            init(_ parts: OriginParts, handOff: HandOffFence) {
                iterator = parts.makeAsyncIterator()
                self.handOff = handOff
            }

            func next() async throws -> OriginPart? {
                let part = try await iterator.next()
                handOff.pass()
                return part
            }
        }

        /// The body's chunks; read once.
        struct Body: AsyncSequence, Sendable {
            typealias Element = ByteBuffer
            private let reader: PartReader?
            private let client: HTTPClientResponse.Body?

            init(_ reader: PartReader) {
                self.reader = reader
                self.client = nil
            }

            init(_ client: HTTPClientResponse.Body) {
                self.reader = nil
                self.client = client
            }

            func makeAsyncIterator() -> AsyncIterator {
                AsyncIterator(reader: reader, client: client?.makeAsyncIterator())
            }

            /// Yields the body's chunks.
            struct AsyncIterator: AsyncIteratorProtocol {
                let reader: PartReader?
                var client: HTTPClientResponse.Body.AsyncIterator?

                mutating func next() async throws -> ByteBuffer? {
                    if let reader {
                        while let part = try await reader.next() {
                            if case .body(let bytes) = part { return bytes }
                        }
                        return nil
                    }
                    return try await client?.next()
                }
            }
        }
    }
#endif
