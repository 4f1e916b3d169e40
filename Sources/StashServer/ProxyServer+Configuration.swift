#if Serve
    import Foundation
    import Stash

    extension ProxyServer {
        /// How a ``ProxyServer`` listens, where it forwards to and what it keeps.
        public struct Configuration: Sendable {
            /// The origin every request is forwarded to: `http://HOST[:PORT][/PREFIX]`.
            public var origin: URL
            /// The address to listen on.
            ///
            /// Defaults to `127.0.0.1`.
            public var host: String
            /// The port to listen on; 0 lets the system pick one (see ``ProxyServer/port``).
            public var port: Int
            /// The disk tier's directory, or `nil` for memory only.
            public var directory: URL?
            /// The disk tier's byte limit.
            ///
            /// Defaults to 1 GB.
            public var sizeLimit: ByteCount
            /// The memory tier's byte limit.
            ///
            /// A body up to an eighth of it is kept in memory. With a disk tier, a sixteenth of it
            /// keeps the decoded heads of disk-tier entries and the memory tier has the rest.
            /// Defaults to 256 MiB.
            public var memoryLimit: ByteCount
            /// The fleet-wide tier behind the disk tier, such as a `PostgresSharedTier`.
            public var sharedTier: (any SharedTier)?
            /// Bodies up to this length are written to the shared tier.
            ///
            /// Defaults to 8 MiB.
            public var sharedItemLimit: ByteCount
            /// Responses with longer bodies are relayed but not stored.
            ///
            /// Defaults to 1 GiB.
            public var maximumStoredBody: ByteCount
            /// Event-loop threads.
            ///
            /// Defaults to the number of cores.
            public var workers: Int
            /// The port of the Prometheus `/metrics` endpoint, or `nil` for none.
            public var metricsPort: Int?
            /// The access log's path, `-` for standard output, or `nil` for none.
            public var accessLogPath: String?
            /// The most bytes of request-head fields; a longer head gets `431`.
            ///
            /// Defaults to 16 KiB.
            public var maximumHeaderSize: Int
            /// How long a request head may take to arrive; a slower one gets `408`.
            ///
            /// Defaults to 10 s.
            public var headerTimeout: Duration
            /// How long a keep-alive connection may stay idle.
            ///
            /// Defaults to 60 s.
            public var idleTimeout: Duration
            /// How long the origin may take to answer.
            ///
            /// Defaults to 60 s.
            public var originTimeout: Duration
            /// How long a graceful shutdown waits for in-flight requests.
            ///
            /// Defaults to 30 s.
            public var shutdownTimeout: Duration
            /// Whether ``ProxyServer/start()`` fails when the origin cannot be reached.
            ///
            /// Defaults to `true`.
            public var checksOrigin: Bool
            /// Other names of the origin that an absolute-form request target (`GET http://NAME/path`)
            /// may use, as `host` (any port) or `host:port`; a target naming any other host gets `400`
            /// (RFC 9112 §3.2.2).
            ///
            /// Defaults to none: only the origin's own authority.
            public var hostAliases: [String]
            /// Peers, as IP addresses or CIDR ranges, whose `Forwarded` and `X-Forwarded-*` fields are
            /// passed on (the client's address appended); from anyone else they are replaced (RFC 7239).
            ///
            /// Defaults to none.
            public var trustedForwarders: [String]
            /// Peers, as IP addresses or CIDR ranges, that may send `PURGE` to the proxy's own listener
            /// (the metrics address accepts it from anyone who reaches it).
            ///
            /// Defaults to none.
            public var purgeAllowList: [String]
            /// A `GET` miss with `Range` fetches the whole response when it is at most this long (once,
            /// coalesced with other misses of the URL), stores it and answers the range from it; a longer
            /// response is fetched again with the client's `Range` and passed through.
            ///
            /// Defaults to 256 MiB.
            public var rangeFetchLimit: ByteCount
            /// Called on the disk thread before each read of the disk tier, with the key: lets a test
            /// hold a read up.
            package var beforeDiskRead: (@Sendable (String) -> Void)?
            /// Called on the disk thread before the disk-tier store of each miss that the proxy
            /// stores without an exchange, with the key: lets a test hold a store up.
            package var beforeDiskStore: (@Sendable (String) -> Void)?

            /// Creates a configuration for `origin` with the defaults above.
            ///
            /// - Parameter origin: The origin to forward to.
            public init(origin: URL) {
                self.origin = origin
                self.host = "127.0.0.1"
                self.port = 8080
                self.directory = nil
                self.sizeLimit = .gigabytes(1)
                self.memoryLimit = .mebibytes(256)
                self.sharedTier = nil
                self.sharedItemLimit = .mebibytes(8)
                self.maximumStoredBody = .gibibytes(1)
                self.workers = ProcessInfo.processInfo.activeProcessorCount
                self.metricsPort = nil
                self.accessLogPath = nil
                self.maximumHeaderSize = 16 * 1024
                self.headerTimeout = .seconds(10)
                self.idleTimeout = .seconds(60)
                self.originTimeout = .seconds(60)
                self.shutdownTimeout = .seconds(30)
                self.checksOrigin = true
                self.hostAliases = []
                self.trustedForwarders = []
                self.purgeAllowList = []
                self.rangeFetchLimit = .mebibytes(256)
            }
        }
    }
#endif
