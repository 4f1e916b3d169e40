#if Postgres
    import Foundation
    import Logging
    import PostgresNIO
    import Stash

    /// A `SharedTier` on PostgreSQL: one table that every server of a fleet shares, so that
    /// each resource is fetched from its origin once.
    ///
    /// ```swift
    /// let shared = try await PostgresSharedTier(url: "postgres://stash:secret@db.internal:5432/cache")
    /// var configuration = ResourceLoader.Configuration()
    /// configuration.sharedTier = shared          // memory → disk → PostgreSQL → origin
    /// let loader = ResourceLoader(cache: disk, configuration: configuration)
    /// ```
    ///
    /// - **Schema.** The table (``Configuration/table``) is created on first use: the SHA-256 of
    ///   the key as primary key, the key, size, XXH64 checksum, created / accessed / expiry times,
    ///   content type, validators, other metadata as JSON, and the body as `bytea`; bodies over
    ///   ``Configuration/chunkSize`` continue in rows of `<table>_chunks`. Every value is bound,
    ///   never spliced into SQL; the table name is checked against a strict pattern.
    /// - **Writes** replace an entry in one transaction, serialised per key by an advisory lock, so
    ///   a reader sees the old body or the new one. A read checks the size and checksum: a damaged
    ///   body is a miss.
    /// - **Limit.** When this process has written a tenth of ``Configuration/sizeLimit`` since its
    ///   last trim, it trims in one statement: expired rows, then the oldest rows (insertion order,
    ///   FIFO like Rails' Solid Cache) down to 90 % of the limit; one process trims at a time.
    /// - **Failure is never the caller's problem.** Each operation has a timeout
    ///   (``Configuration/operationTimeout``); consecutive failures open a circuit breaker that
    ///   refuses calls at once for ``Configuration/cooldown``, then lets one probe through. Opening
    ///   and recovering are logged (`warning` / `notice`) and counted in ``statistics``. The chain
    ///   in `Cache` and `ResourceLoader` treats every failure as a miss.
    /// - **One pool per process.** The tier owns a `PostgresClient` (a connection pool of up to
    ///   ``Configuration/maximumConnections``); create one tier per process and share it, and call
    ///   ``shutdown()`` when done.
    public final class PostgresSharedTier: SharedTier {
        /// The settings the tier was created with.
        public let configuration: Configuration
        /// `user@host:port/database`, without the password.
        public let endpoint: String

        let target: Endpoint
        let client: PostgresClient
        let logger: Logger
        let breaker: CircuitBreaker
        let counters = LockedValue(Statistics())
        let schema = LockedValue(false)
        let bytesSinceTrim = LockedValue(0)
        private let runner: Task<Void, Never>

        /// Connects to the database at `url`, checks the credentials, and creates the table if needed.
        ///
        /// A database that cannot be reached (down, refusing connections) does not fail the
        /// construction: the tier starts with its circuit breaker open, logs a warning, and
        /// connects when the database comes back. Everything that can never work does fail it.
        ///
        /// - Parameters:
        ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
        ///   - configuration: Limits, timeouts and the table name; see ``Configuration``.
        ///   - logger: Where the tier logs. Defaults to a logger labelled `stash.postgres`.
        /// - Throws: `StashError` with `StashError.Code.invalidArgument` for a URL
        ///   that is not a PostgreSQL URL, an invalid configuration, a user name or password the
        ///   server rejects, a database that does not exist, or a user without the right to create
        ///   the table. The message names the endpoint (never the password) and what to do.
        /// - Complexity: One connection and a few statements.
        public init(url: String, configuration: Configuration = Configuration(), logger: Logger? = nil) async throws {
            try configuration.validate()
            let target = try Endpoint(url)
            self.target = target
            self.configuration = configuration
            self.endpoint = target.description
            let logger = logger ?? Logger(label: "stash.postgres")
            self.logger = logger
            self.breaker = CircuitBreaker(
                threshold: configuration.failureThreshold, cooldown: configuration.cooldown, clock: configuration.clock)
            let tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            var clientConfiguration = PostgresClient.Configuration(
                host: target.host, port: target.port, username: target.username, password: target.password,
                database: target.database, tls: target.requiresTLS ? .require(tlsConfiguration) : .disable)
            clientConfiguration.options.maximumConnections = configuration.maximumConnections
            clientConfiguration.options.connectTimeout = configuration.operationTimeout
            // The pool logs every failed connection attempt at `info`; a fleet whose database is down
            // would log that many times a second. The tier's own warning says it once.
            var quieterLogger = logger
            quieterLogger.logLevel = max(logger.logLevel, .warning)
            let poolLogger = quieterLogger
            let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: poolLogger)
            self.client = client
            self.runner = Task { await client.run() }
            do {
                // One direct connection first: the pool retries refused credentials quietly, but a bad
                // password or database must fail the construction with the server's answer.
                let direct = PostgresConnection.Configuration(
                    host: target.host, port: target.port, username: target.username, password: target.password,
                    database: target.database,
                    tls: target.requiresTLS ? .require(try NIOSSLContext(configuration: tlsConfiguration)) : .disable)
                try await withTimeout(configuration.operationTimeout) {
                    let connection = try await PostgresConnection.connect(
                        on: PostgresConnection.defaultEventLoopGroup.any(), configuration: direct, id: 0,
                        logger: poolLogger
                    )
                    do {
                        try await self.createSchema(on: connection)
                        try await connection.close()
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                }
                schema.withLock { $0 = true }
            } catch {
                if let rejection = Self.rejection(error, endpoint: target) {
                    shutdown()
                    throw rejection
                }
                // Deliberately tolerated: a fleet must start while its database is down. The tier
                // behaves as an open breaker until the database answers, and creates the table then.
                _ = breaker.failed()
                for _ in 1..<configuration.failureThreshold { _ = breaker.failed() }
                counters.withLock {
                    $0.failures += 1
                    $0.breakerOpenings += 1
                }
                logger.warning(
                    "PostgreSQL shared tier unreachable; serving from local tiers and the origin until it answers",
                    metadata: ["endpoint": "\(endpoint)", "error": "\(String(reflecting: error))"])
            }
        }

        deinit {
            runner.cancel()
        }

        /// Closes the connection pool.
        ///
        /// Calls made afterwards fail (and count as misses in the chain).
        ///
        /// - Complexity: O(*c*) for *c* open connections.
        public func shutdown() {
            runner.cancel()
        }

        /// Counters since the tier was created.
        public var statistics: Statistics { counters.withLock { $0 } }

        /// Whether the circuit breaker is open: calls are refused without reaching the database.
        public var isCircuitOpen: Bool { breaker.isOpen }

        // MARK: - SharedTier

        /// The live entry stored under `key`, or `nil`.
        ///
        /// - Parameter key: A non-empty key, compared byte for byte.
        /// - Returns: The entry with its whole body; `nil` on a miss, for an expired entry, and for a
        ///   body whose size or checksum does not match (counted in ``Statistics/damagedBodies``).
        /// - Throws: `StashError` with `StashError.Code.transport` when the database
        ///   failed, timed out, or the breaker is open.
        /// - Complexity: One indexed query, plus O(*n*) in the body's length.
        public func entry(forKey key: String) async throws -> SharedEntry? {
            let entry = try await guarded("read", key: key) { try await self.select(key) }
            counters.withLock { entry == nil ? ($0.misses += 1) : ($0.hits += 1) }
            return entry
        }

        /// Stores `entry`, replacing any entry under its key, then trims if this process has written
        /// enough since its last trim.
        ///
        /// - Parameter entry: The entry; without an expiry it gets ``Configuration/defaultTimeToLive``.
        /// - Throws: `StashError` with `StashError.Code.tooLarge` for a body over
        ///   ``Configuration/sizeLimit``, `StashError.Code.invalidKey` for an empty key, or
        ///   `StashError.Code.transport` when the database failed.
        /// - Complexity: One transaction of 4 + *c* statements for *c* chunks, plus a trim.
        public func store(_ entry: SharedEntry) async throws {
            try Self.validate(key: entry.key)
            guard entry.body.count <= configuration.sizeLimit.bytes else {
                throw tooLarge(entry.key, size: entry.body.count)
            }
            try await guarded("store", key: entry.key) { try await self.insert(entry) }
            try await recordStore(size: entry.body.count)
        }

        /// Counts a store of `size` bytes and trims if this process has written a tenth of the
        /// limit since its last trim.
        func recordStore(size: Int) async throws {
            counters.withLock {
                $0.stores += 1
                $0.bytesStored += size
            }
            let due = bytesSinceTrim.withLock { written -> Bool in
                written += size
                guard written >= max(1, configuration.sizeLimit.bytes / 10) else { return false }
                written = 0
                return true
            }
            if due { try await trim() }
        }

        /// The error for a body over ``Configuration/sizeLimit``.
        func tooLarge(_ key: String, size: Int) -> StashError {
            StashError(
                .tooLarge,
                "Cannot store '\(key)' in the PostgreSQL shared tier at \(endpoint): its \(size) "
                    + "bytes exceed the tier's sizeLimit (\(configuration.sizeLimit.bytes)); raise the limit.")
        }

        /// Replaces the metadata and expiry of the entry under `key`, keeping its body.
        ///
        /// - Returns: `false` when there is no entry under `key`.
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: One indexed update.
        public func updateMetadata(_ metadata: DiskCache.Metadata, expires: Date?, forKey key: String) async throws
            -> Bool
        {
            try await guarded("update", key: key) { try await self.update(metadata, expires: expires, key: key) }
        }

        /// Removes the entry under `key`, if any.
        ///
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: One indexed delete.
        public func removeEntry(forKey key: String) async throws {
            try await guarded("remove", key: key) { try await self.delete(key) }
        }

        /// Whether a live entry is stored under `key`.
        ///
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: One indexed query.
        public func containsEntry(forKey key: String) async throws -> Bool {
            try await guarded("look up", key: key) { try await self.exists(key) }
        }

        /// Deletes expired entries, then the oldest entries down to 90 % of
        /// ``Configuration/sizeLimit`` if the table is over the limit.
        ///
        /// Runs on its own every time this process has written a tenth of the limit; call it to
        /// trim now. Another process trimming at the same time makes this call return at once.
        ///
        /// - Returns: The number of entries deleted.
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: O(*N* log *N*) in the database for *N* entries (one window query).
        @discardableResult
        public func trim() async throws -> Int {
            let deleted = try await guarded("trim", key: nil) { try await self.trimOldest() }
            counters.withLock {
                $0.trims += 1
                $0.trimmedEntries += deleted
            }
            return deleted
        }

        /// The total size in bytes and the number of entries in the table, expired ones included.
        ///
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: O(*N*) in the database.
        public func totals() async throws -> (size: Int, count: Int) {
            try await guarded("count", key: nil) { try await self.selectTotals() }
        }

        /// Removes every entry from the table.
        ///
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: One `TRUNCATE`.
        public func removeAll() async throws {
            try await guarded("clear", key: nil) { try await self.truncate() }
        }

        static func validate(key: String) throws {
            guard !key.isEmpty else {
                throw StashError(
                    .invalidKey, "The PostgreSQL shared tier cannot store an empty key; use a non-empty key.")
            }
        }
    }
#endif
