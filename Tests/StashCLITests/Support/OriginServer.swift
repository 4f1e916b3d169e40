import FlyingFox
import FlyingSocks
import Foundation

/// A FlyingFox HTTP server on 127.0.0.1 for `stash fetch`: serves `/files/NAME-SIZE` as SIZE
/// bytes with an ETag and `Cache-Control: no-cache`, answers `If-None-Match` with 304, serves
/// anything else as 404, and counts every request by path.
final class OriginServer: Sendable {
    struct Counts: Sendable {
        var requests = 0
        var byPath: [String: Int] = [:]
        var notModified = 0
    }

    let port: UInt16
    private let counts: Locked<Counts>
    private let versions: Locked<[String: Int]>
    private let http: HTTPServer
    private let runTask: Task<Void, any Error>

    private init(
        counts: Locked<Counts>, versions: Locked<[String: Int]>, http: HTTPServer, runTask: Task<Void, any Error>,
        port: UInt16
    ) {
        self.counts = counts
        self.versions = versions
        self.http = http
        self.runTask = runTask
        self.port = port
    }

    /// Binds 127.0.0.1 explicitly: `.loopback(port:)` would listen on IPv6 only.
    static func start() async throws -> OriginServer {
        let counts = Locked(Counts())
        let versions = Locked([String: Int]())
        let http = HTTPServer(
            address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 30, logger: .disabled,
            handler: Handler(counts: counts, versions: versions))
        let runTask = Task { try await http.run() }
        try await http.waitUntilListening()
        guard case .ip4(_, let port) = await http.listeningAddress else { throw URLError(.cannotConnectToHost) }
        return OriginServer(counts: counts, versions: versions, http: http, runTask: runTask, port: port)
    }

    func stop() async {
        await http.stop(timeout: 0)
        runTask.cancel()
        _ = await runTask.result
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    var served: Counts { counts.withLock { $0 } }

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

        func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
            let path = request.path
            let version = versions.withLock { $0[path] ?? 1 }
            counts.withLock {
                $0.requests += 1
                $0.byPath[path, default: 0] += 1
            }
            guard let body = OriginServer.body(path, version: version) else {
                return HTTPResponse(statusCode: .notFound)
            }
            var headers = HTTPHeaders()
            headers[.eTag] = "\"v\(version)\""
            headers[.cacheControl] = "no-cache"
            if request.headers[.ifNoneMatch] == "\"v\(version)\"" {
                counts.withLock { $0.notModified += 1 }
                return HTTPResponse(statusCode: .notModified, headers: headers)
            }
            headers[.contentType] = "application/octet-stream"
            return HTTPResponse(statusCode: .ok, headers: headers, body: body)
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
