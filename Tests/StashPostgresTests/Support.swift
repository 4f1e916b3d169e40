#if Postgres
    import FlyingFox
    import FlyingSocks
    import Foundation
    import Logging
    import PostgresNIO
    import Stash
    import StashPostgres
    import Testing

    /// The private PostgreSQL cluster that `make test` starts with `scripts/postgres`.
    enum Postgres {
        static let environment = ProcessInfo.processInfo.environment
        /// `postgres://stash:stash@127.0.0.1:PORT/stash`, or `nil` when the tests were not started
        /// through `scripts/postgres`.
        static let url = environment["STASH_POSTGRES_URL"]
        static let isAvailable = url != nil

        /// Skips a test, with the reason shown, when no cluster was started for it.
        static let required = Testing.ConditionTrait.enabled(
            if: isAvailable,
            "needs PostgreSQL: run `make test`, or `scripts/postgres run -- swift test --filter StashPostgresTests`")

        /// A table of its own for each test, so that tests never see each other's entries.
        static func uniqueTable() -> String {
            "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        }

        /// A tier on a table of its own.
        ///
        /// Its operations may take 30 seconds, not the default 2: when every test of the package
        /// runs at once on two cores (`swift test` without `--no-parallel`), a store waited more
        /// than 2 seconds for a thread three times running, and the breaker opened in a test that
        /// is not about timeouts. The tests that are set their own timeout.
        static func tier(_ configure: (inout PostgresSharedTier.Configuration) -> Void = { _ in }) async throws
            -> PostgresSharedTier
        {
            var configuration = PostgresSharedTier.Configuration(table: uniqueTable(), operationTimeout: .seconds(30))
            configure(&configuration)
            return try await PostgresSharedTier(url: url!, configuration: configuration)
        }

        /// The URL with another password, port or database.
        static func url(password: String? = nil, port: Int? = nil, database: String? = nil) -> String {
            var components = URLComponents(string: url!)!
            if let password { components.password = password }
            if let port { components.port = port }
            if let database { components.path = "/" + database }
            return components.string!
        }

        /// Runs `sql` on a connection of its own: the tests' way to damage rows behind a tier's back.
        static func execute(_ sql: String) async throws {
            let components = URLComponents(string: url!)!
            let configuration = PostgresConnection.Configuration(
                host: components.host!, port: components.port ?? 5432, username: components.user!,
                password: components.password, database: String(components.path.dropFirst()), tls: .disable)
            let connection = try await PostgresConnection.connect(
                configuration: configuration, id: 1, logger: Logger(label: "stash.tests"))
            do {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "stash.tests"))
            } catch {
                try? await connection.close()
                throw error
            }
            try await connection.close()
        }

        /// Stops (`pause`) or restarts (`resume`) the cluster's server, keeping its data.
        ///
        /// Runs the script off the cooperative thread pool, with its output discarded: the restarted
        /// server outlives the script and must not hold the test's output open.
        static func control(_ command: String) async {
            let status: Int32 = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    // system(3), not Process: Foundation's Process did not see the script exit once it
                    // had started a server that outlives it.
                    let script = environment["STASH_POSTGRES_SCRIPT"]!
                    let directory = environment["STASH_POSTGRES_DIR"]!
                    continuation.resume(
                        returning: system("'\(script)' \(command) '\(directory)' >/dev/null 2>&1 </dev/null"))
                }
            }
            #expect(status == 0)
        }
    }

    /// A clock that moves only when a test moves it.
    final class TestClock: Sendable {
        private let now = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
        var date: Date { now.withLock { $0 } }
        func advance(by seconds: TimeInterval) { now.withLock { $0 += seconds } }
        var closure: @Sendable () -> Date { { self.date } }
    }

    /// Deterministic bytes: `count` of them from `seed`.
    func testBytes(_ count: Int, seed: UInt64) -> Data {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for index in 0..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    /// Temporary directories for one test, removed when the test's suite instance goes away.
    final class Scratch: Sendable {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("stash-pg-" + UUID().uuidString)

        /// A new directory under ``root``.
        func directory() -> URL {
            root.appendingPathComponent(UUID().uuidString)
        }

        deinit {
            try? FileManager.default.removeItem(at: root)
        }
    }

    /// A real HTTP origin on 127.0.0.1 that serves `/photo/N` (N × 1000 + 1 bytes, ETag `"vN"`) and
    /// counts the requests for each path; a request carrying the current ETag gets a 304.
    final class Origin: Sendable {
        let port: UInt16
        let counts = LockedValue([String: Int]())
        let cacheControl = LockedValue("max-age=3600")
        private let server: HTTPServer
        private let task: Task<Void, any Error>

        private init(server: HTTPServer, task: Task<Void, any Error>, port: UInt16) {
            self.server = server
            self.task = task
            self.port = port
        }

        static func start() async throws -> Origin {
            let handler = Handler()
            let server = HTTPServer(
                address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 30, logger: .disabled, handler: handler)
            let task = Task { try await server.run() }
            try await server.waitUntilListening()
            guard case .ip4(_, let port) = await server.listeningAddress else { throw URLError(.cannotConnectToHost) }
            let origin = Origin(server: server, task: task, port: port)
            handler.origin.withLock { $0.origin = origin }
            return origin
        }

        func stop() async {
            await server.stop(timeout: 0)
            task.cancel()
        }

        func url(_ photo: Int) -> URL { URL(string: "http://127.0.0.1:\(port)/photo/\(photo)")! }
        static func body(_ photo: Int) -> Data { testBytes(photo * 1000 + 1, seed: UInt64(photo)) }
        var requests: Int { counts.withLock { $0.values.reduce(0, +) } }

        private final class Handler: HTTPHandler {
            /// Weak: the origin holds this handler through its HTTPServer, and a strong reference
            /// back would keep both alive after the test stops them.
            let origin = LockedValue(WeakOrigin())
            struct WeakOrigin: @unchecked Sendable { weak var origin: Origin? }

            func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
                guard let origin = origin.withLock({ $0.origin }), request.path.hasPrefix("/photo/"),
                    let photo = Int(request.path.dropFirst("/photo/".count))
                else { return HTTPResponse(statusCode: .notFound) }
                origin.counts.withLock { $0[request.path, default: 0] += 1 }
                let etag = "\"v\(photo)\""
                var headers = HTTPHeaders()
                headers[HTTPHeader("ETag")] = etag
                headers[HTTPHeader("Cache-Control")] = origin.cacheControl.withLock { $0 }
                headers[HTTPHeader("Content-Type")] = "image/jpeg"
                if request.headers[HTTPHeader("If-None-Match")] == etag {
                    return HTTPResponse(statusCode: .notModified, headers: headers)
                }
                return HTTPResponse(statusCode: .ok, headers: headers, body: Origin.body(photo))
            }
        }
    }
#endif
