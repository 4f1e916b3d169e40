#if Postgres
    import Foundation
    import Stash

    extension PostgresSharedTier {
        /// Settings of a ``PostgresSharedTier``; every one has a default.
        public struct Configuration: Sendable {
            /// The most bytes of bodies the table keeps.
            ///
            /// Older entries are trimmed in batches, oldest first, down to 90 % of it. Defaults to 1 GB.
            public var sizeLimit: ByteCount
            /// How long entries stored without an expiry live.
            ///
            /// Defaults to `nil`: until trimmed.
            public var defaultTimeToLive: Duration?
            /// The table's name.
            ///
            /// Lowercase letters, digits and underscores, starting with a letter; the chunks of large
            /// bodies live in `<table>_chunks`. Defaults to `stash_entries`.
            public var table: String
            /// The most bytes of a body kept in its entry's row.
            ///
            /// Longer bodies continue in rows of this length. Defaults to 1 MiB.
            public var chunkSize: ByteCount
            /// How long one operation may take before it counts as a failure.
            ///
            /// Defaults to 2 seconds.
            public var operationTimeout: Duration
            /// Consecutive failures that open the circuit breaker.
            ///
            /// Defaults to 3.
            public var failureThreshold: Int
            /// How long the open breaker refuses calls before it lets one probe through.
            ///
            /// Defaults to 5 seconds.
            public var cooldown: Duration
            /// How long an instance waits for another one fetching the same key.
            ///
            /// See ``PostgresSharedTier/lockForFill(forKey:)``; after the wait, the instance fetches
            /// the key too. Defaults to 10 seconds.
            public var fillLockTimeout: Duration
            /// The most connections of the pool.
            ///
            /// One pool per tier: create one tier per process. Defaults to 8.
            public var maximumConnections: Int
            /// The current time, for expiry and the circuit breaker.
            ///
            /// Inject a clock in tests.
            public var clock: @Sendable () -> Date

            /// Creates a configuration.
            public init(
                sizeLimit: ByteCount = .gigabytes(1), defaultTimeToLive: Duration? = nil,
                table: String = "stash_entries",
                chunkSize: ByteCount = .mebibytes(1), operationTimeout: Duration = .seconds(2),
                failureThreshold: Int = 3,
                cooldown: Duration = .seconds(5), fillLockTimeout: Duration = .seconds(10), maximumConnections: Int = 8,
                clock: @escaping @Sendable () -> Date = { Date() }
            ) {
                self.sizeLimit = sizeLimit
                self.defaultTimeToLive = defaultTimeToLive
                self.table = table
                self.chunkSize = chunkSize
                self.operationTimeout = operationTimeout
                self.failureThreshold = failureThreshold
                self.cooldown = cooldown
                self.fillLockTimeout = fillLockTimeout
                self.maximumConnections = maximumConnections
                self.clock = clock
            }

            /// Throws for settings that can never work.
            func validate() throws {
                let first = table.unicodeScalars.first.map { ("a"..."z").contains($0) } ?? false
                let rest = table.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                }
                guard first, rest, table.count <= 48 else {
                    throw StashError(
                        .invalidArgument,
                        "Invalid PostgreSQL shared-tier table name '\(table)': use 1 to 48 lowercase letters, digits and "
                            + "underscores, starting with a letter.")
                }
                guard sizeLimit.bytes > 0, chunkSize.bytes > 0, failureThreshold > 0, maximumConnections > 0,
                    operationTimeout > .zero, cooldown >= .zero
                else {
                    throw StashError(
                        .invalidArgument,
                        "Invalid PostgreSQL shared-tier configuration: sizeLimit, chunkSize, failureThreshold, "
                            + "maximumConnections and operationTimeout must be positive, cooldown not negative.")
                }
            }
        }

        /// The parts of a `postgres://user[:password]@host[:port]/database` URL.
        struct Endpoint: Sendable, Hashable, CustomStringConvertible {
            var host: String
            var port: Int
            var username: String
            var password: String?
            var database: String
            /// `?sslmode=require` (or `verify-full`): connect over TLS, verifying the server's certificate.
            var requiresTLS: Bool

            /// Parses `url`, or throws a `StashError` that says what is wrong with it.
            init(_ url: String) throws {
                func invalid(_ problem: String) -> StashError {
                    StashError(
                        .invalidArgument,
                        "Invalid PostgreSQL URL '\(Self.redacted(url))': \(problem). Expected "
                            + "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, for example "
                            + "postgres://stash@127.0.0.1:5432/stash.")
                }
                guard let components = URLComponents(string: url), let scheme = components.scheme else {
                    throw invalid("it is not a URL")
                }
                guard scheme == "postgres" || scheme == "postgresql" else {
                    throw invalid("the scheme is '\(scheme)', not postgres")
                }
                guard let host = components.host, !host.isEmpty else { throw invalid("it has no host") }
                guard let user = components.user, !user.isEmpty else { throw invalid("it has no user name") }
                let database = String(components.path.drop(while: { $0 == "/" }))
                guard !database.isEmpty, !database.contains("/") else { throw invalid("it names no database") }
                if let port = components.port, !(1...65535).contains(port) { throw invalid("the port is out of range") }
                self.host = host
                self.port = components.port ?? 5432
                self.username = components.user.map { $0.removingPercentEncoding ?? $0 } ?? user
                self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
                self.database = database.removingPercentEncoding ?? database
                let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
                guard ["disable", "require", "verify-full"].contains(mode) else {
                    throw invalid("sslmode '\(mode)' is not disable, require or verify-full")
                }
                self.requiresTLS = mode != "disable"
            }

            /// `user@host:port/database`, without the password.
            var description: String { "\(username)@\(host):\(port)/\(database)" }

            /// `url` with any password replaced by `***`, for messages.
            static func redacted(_ url: String) -> String {
                guard var components = URLComponents(string: url), components.password != nil else { return url }
                components.password = "***"
                return components.string ?? url
            }
        }
    }
#endif
