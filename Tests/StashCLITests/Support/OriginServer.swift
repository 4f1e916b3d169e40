#if Tool
    import FlyingFox
    import FlyingSocks
    import Foundation

    /// A FlyingFox HTTP server on 127.0.0.1 for `stash fetch`: serves `/files/NAME-SIZE` as SIZE
    /// bytes with an ETag and `Cache-Control: no-cache` (`max-age=0` for `/files/stale-ok-SIZE`), answers `If-None-Match` with 304, serves
    /// anything else as 404, and counts every request by path.
    ///
    /// `Range: bytes=N-` with a matching `If-Range` gets a 206. Paths passed to ``cut(_:at:)`` drop
    /// the connection after that many bytes of the body until ``heal(_:)``.
    final class OriginServer: Sendable {
        struct Counts: Sendable {
            var requests = 0
            var byPath: [String: Int] = [:]
            var notModified = 0
            /// The `Range` headers received, in order.
            var ranges: [String] = []
        }

        let port: UInt16
        private let counts: Locked<Counts>
        private let versions: Locked<[String: Int]>
        private let cuts: Locked<[String: Int]>
        private let http: HTTPServer
        private let runTask: Task<Void, any Error>

        private init(
            counts: Locked<Counts>, versions: Locked<[String: Int]>, cuts: Locked<[String: Int]>, http: HTTPServer,
            runTask: Task<Void, any Error>, port: UInt16
        ) {
            self.counts = counts
            self.versions = versions
            self.cuts = cuts
            self.http = http
            self.runTask = runTask
            self.port = port
        }

        /// Binds 127.0.0.1 explicitly: `.loopback(port:)` would listen on IPv6 only.
        static func start() async throws -> OriginServer {
            let counts = Locked(Counts())
            let versions = Locked([String: Int]())
            let cuts = Locked([String: Int]())
            let http = HTTPServer(
                address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 30, logger: .disabled,
                handler: Handler(counts: counts, versions: versions, cuts: cuts))
            let runTask = Task { try await http.run() }
            try await http.waitUntilListening()
            guard case .ip4(_, let port) = await http.listeningAddress else { throw URLError(.cannotConnectToHost) }
            return OriginServer(
                counts: counts, versions: versions, cuts: cuts, http: http, runTask: runTask, port: port)
        }

        func stop() async {
            await http.stop(timeout: 0)
            runTask.cancel()
            _ = await runTask.result
        }

        func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

        var served: Counts { counts.withLock { $0 } }

        /// Makes every response to `path` drop the connection after `offset` bytes of the body.
        func cut(_ path: String, at offset: Int) {
            cuts.withLock { $0[path] = offset }
        }

        /// Lets responses to `path` end normally again.
        func heal(_ path: String) {
            cuts.withLock { $0[path] = nil }
        }

        /// Gives `path` new bytes and a new ETag.
        func change(_ path: String) {
            versions.withLock { $0[path, default: 1] += 1 }
        }

        /// The bytes `path` serves at `version`.
        static func body(_ path: String, version: Int = 1) -> Data? {
            guard path.hasPrefix("/files/"), let size = path.split(separator: "-").last.flatMap({ Int($0) }) else {
                return nil
            }
            let pattern = Array("\(path) v\(version);".utf8)
            return Data((0..<size).map { pattern[$0 % pattern.count] })
        }

        private struct Handler: HTTPHandler {
            let counts: Locked<Counts>
            let versions: Locked<[String: Int]>
            let cuts: Locked<[String: Int]>

            func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
                let path = request.path
                let version = versions.withLock { $0[path] ?? 1 }
                let range = request.headers[HTTPHeader("Range")]
                counts.withLock {
                    $0.requests += 1
                    $0.byPath[path, default: 0] += 1
                    if let range { $0.ranges.append(range) }
                }
                guard let body = OriginServer.body(path, version: version) else {
                    return HTTPResponse(statusCode: .notFound)
                }
                var headers = HTTPHeaders()
                headers[.eTag] = "\"v\(version)\""
                // A `/files/stale-ok-…` body is stale at once (`max-age=0`) rather than `no-cache`, which a
                // shared cache may never serve stale (RFC 9111 §4.2.4).
                headers[.cacheControl] = path.hasPrefix("/files/stale-ok-") ? "max-age=0" : "no-cache"
                if request.headers[.ifNoneMatch] == "\"v\(version)\"" {
                    counts.withLock { $0.notModified += 1 }
                    return HTTPResponse(statusCode: .notModified, headers: headers)
                }
                headers[.contentType] = "application/octet-stream"
                var (status, start) = (HTTPStatusCode.ok, 0)
                if let range, range.hasPrefix("bytes="), range.hasSuffix("-"),
                    let offset = Int(range.dropFirst(6).dropLast()), offset < body.count,
                    request.headers[HTTPHeader("If-Range")] == "\"v\(version)\""
                {
                    headers[HTTPHeader("Content-Range")] = "bytes \(offset)-\(body.count - 1)/\(body.count)"
                    (status, start) = (HTTPStatusCode(206, phrase: "Partial Content"), offset)
                }
                guard let cut = cuts.withLock({ $0[path] }) else {
                    return HTTPResponse(
                        statusCode: status, headers: headers, body: body.subdata(in: start..<body.count))
                }
                let sequence = CutBody(bytes: body.subdata(in: start..<max(start, min(cut, body.count))))
                return HTTPResponse(
                    statusCode: status, headers: headers,
                    body: HTTPBodySequence(from: sequence, count: body.count - start, suggestedBufferSize: 16 * 1024))
            }
        }
    }

    /// A body that sends its bytes and then fails, so that the server drops the connection before
    /// the announced length.
    private struct CutBody: AsyncBufferedSequence, Sendable {
        typealias Element = UInt8
        struct Cut: Error {}

        let bytes: Data

        func makeAsyncIterator() -> Iterator { Iterator(bytes: bytes) }

        struct Iterator: AsyncBufferedIteratorProtocol {
            let bytes: Data
            var offset = 0

            mutating func next() async throws -> UInt8? {
                try await nextBuffer(suggested: 1)?.first
            }

            mutating func nextBuffer(suggested count: Int) async throws -> Data? {
                guard offset < bytes.count else { throw Cut() }
                let length = Swift.min(Swift.max(count, 1), bytes.count - offset)
                defer { offset += length }
                return bytes.subdata(in: offset..<(offset + length))
            }
        }
    }

    /// Runs `body` with a fresh server and stops it afterwards, whatever happens.
    func withOriginServer<T>(_ body: (OriginServer) async throws -> T) async throws -> T {
        let server = try await OriginServer.start()
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
#endif
