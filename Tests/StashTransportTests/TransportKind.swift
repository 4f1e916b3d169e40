#if AsyncHTTPClient
    import Foundation
    import Logging
    import Stash
    import StashAsyncHTTPClient
    import Testing

    @testable import StashHTTP

    /// The transports that must keep the ``HTTPTransport`` contract: every contract test runs once
    /// with each.
    enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case urlSession
        case asyncHTTPClient

        var testDescription: String { rawValue }

        func make() -> any HTTPTransport {
            switch self {
            case .urlSession: URLSessionTransport()
            case .asyncHTTPClient: AsyncHTTPClientTransport()
            }
        }
    }

    /// A disk cache and a loader over it that sends its requests with one transport.
    struct TransportFixture {
        let cache: DiskCache
        let loader: ResourceLoader
        let events = EventLog()
        let directory: URL

        /// Opens a 100 MB cache in `directory` and a loader with no retries unless `configure` says
        /// otherwise.
        init(
            _ kind: TransportKind, directory: URL,
            configure: (inout ResourceLoader.Configuration) -> Void = { _ in }
        ) throws {
            self.directory = directory
            cache = try DiskCache(directory: directory, sizeLimit: .megabytes(100))
            var configuration = ResourceLoader.Configuration(retryPolicy: .none)
            configure(&configuration)
            configuration.onEvent = events.handler
            loader = ResourceLoader(
                cache: cache, transport: kind.make(), configuration: configuration,
                logger: Logger(label: "stash.transport.tests"))
        }

        /// Files in the loader's `downloads/` directory.
        var downloads: [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("downloads").path))
                ?? []
        }
    }

    /// Runs `body` with a fresh server, a fresh directory and a fixture over them.
    func withTransportFixture<T>(
        _ kind: TransportKind, configure: (inout ResourceLoader.Configuration) -> Void = { _ in },
        _ body: (TestServer, TransportFixture) async throws -> T
    ) async throws -> T {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                try await body(server, try TransportFixture(kind, directory: directory, configure: configure))
            }
        }
    }
#endif
