#if Postgres
    import Foundation
    import Logging
    import PostgresNIO
    import Stash

    extension PostgresSharedTier {
        /// Runs one database operation behind the circuit breaker and the timeout, creating the
        /// table first if it does not exist yet; every failure becomes a `StashError`.
        ///
        /// A streamed operation passes `wholeTimeout: false` and times each round trip itself
        /// (``withTimeout(_:_:)`` around each query), since a large body takes as long as it takes;
        /// its caller's own failures (a sink or body sequence throwing) arrive as ``CallerFailure``
        /// and are rethrown without counting against the database.
        func guarded<Result: Sendable>(
            _ operation: String, key: String?, wholeTimeout: Bool = true,
            _ body: @escaping @Sendable () async throws -> Result
        ) async throws -> Result {
            let what = key.map { "\(operation) '\($0)'" } ?? operation
            if breaker.admit() == .refused {
                counters.withLock { $0.refusedWhileOpen += 1 }
                throw StashError(
                    .transport,
                    "The PostgreSQL shared tier at \(endpoint) did not \(what): its circuit breaker is open after "
                        + "repeated failures; it retries on its own.")
            }
            do {
                let result: Result
                if wholeTimeout {
                    result = try await withTimeout(configuration.operationTimeout) {
                        try await self.createSchemaIfNeeded()
                        return try await body()
                    }
                } else {
                    try await withTimeout(configuration.operationTimeout) { try await self.createSchemaIfNeeded() }
                    result = try await body()
                }
                answered()
                return result
            } catch let failure as CallerFailure {
                answered()  // the database did its part; the caller's sink or body failed
                throw failure.error
            } catch {
                if Task.isCancelled {
                    _ = breaker.succeeded()  // the caller gave up; the database did not fail
                    throw StashError(.cancelled, "The shared-tier \(what) was cancelled.", cause: error)
                }
                counters.withLock { $0.failures += 1 }
                if breaker.failed() == .opened {
                    counters.withLock { $0.breakerOpenings += 1 }
                    logger.warning(
                        "PostgreSQL shared tier failing; serving from local tiers and the origin for now",
                        metadata: [
                            "endpoint": "\(endpoint)", "cooldown": "\(configuration.cooldown)",
                            "error": "\(String(reflecting: error))",
                        ])
                }
                if let error = error as? StashError { throw error }
                throw StashError(
                    .transport, "The PostgreSQL shared tier at \(endpoint) failed to \(what).", cause: error)
            }
        }

        private func createSchemaIfNeeded() async throws {
            if !schema.withLock({ $0 }) {
                try await createSchema()
                schema.withLock { $0 = true }
            }
        }

        /// Tells the breaker that the database answered, noting a recovery.
        private func answered() {
            if breaker.succeeded() == .closed {
                counters.withLock { $0.recoveries += 1 }
                logger.notice("PostgreSQL shared tier answers again", metadata: ["endpoint": "\(endpoint)"])
            }
        }

        /// A failure of the caller's side of a streamed operation (its sink, its body sequence):
        /// not the database's, so it never opens the breaker.
        struct CallerFailure: Error {
            var error: any Error
        }

        /// A `StashError` for a failure that retrying cannot fix (bad credentials, no such
        /// database, no right to create the table), or `nil` for one that may pass (the server down).
        static func rejection(_ error: any Error, endpoint: Endpoint) -> StashError? {
            if let error = error as? PSQLError, error.code == .authMechanismRequiresPassword {
                return StashError(
                    .invalidArgument,
                    "PostgreSQL at \(endpoint.host):\(endpoint.port) requires a password for \(endpoint.username): put it "
                        + "in the URL (postgres://USER:PASSWORD@…) or, for the stash tool, in $PGPASSWORD.",
                    cause: error)
            }
            guard let error = error as? PSQLError, error.code == .server,
                let state = error.serverInfo?[.sqlState]
            else { return nil }
            let message = error.serverInfo?[.message] ?? "error \(state)"
            let remedy: String
            switch state {
            case "28P01", "28000":
                remedy = "check the user name and password in the URL"
            case "3D000":
                remedy = "create the database (createdb \(endpoint.database)) or name an existing one in the URL"
            case "42501":
                remedy = "grant the user CREATE on the database's schema, or create the table as its owner"
            default:
                return nil
            }
            return StashError(
                .invalidArgument,
                "PostgreSQL at \(endpoint.host):\(endpoint.port) refused \(endpoint.username) for database "
                    + "'\(endpoint.database)': \(message) (SQLSTATE \(state)); \(remedy).",
                cause: error)
        }
    }

    /// Runs `body`, or throws a `StashError` with code `StashError.Code.transport` if
    /// it takes longer than `timeout`.
    ///
    /// Returns at the deadline even when `body` does not react to cancellation at once (a connection
    /// attempt in the pool, say): `body` is cancelled and left to end in the background, so a slow
    /// database never holds a caller longer than the timeout.
    func withTimeout<Result: Sendable>(
        _ timeout: Duration, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let race = Race<Result>()
        let work = Task {
            do {
                race.finish(.success(try await body()))
            } catch {
                race.finish(.failure(error))
            }
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            race.finish(.failure(StashError(.transport, "A PostgreSQL operation took longer than \(timeout).")))
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await race.value()
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first of several outcomes, handed to one waiter.
    final class Race<Value: Sendable>: Sendable {
        private struct State {
            var outcome: Swift.Result<Value, any Error>?
            var waiter: CheckedContinuation<Value, any Error>?
        }

        private let state = LockedValue(State())

        /// Records `outcome` unless one was recorded already.
        func finish(_ outcome: Swift.Result<Value, any Error>) {
            let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(with: outcome)
        }

        /// The first outcome, once there is one.
        func value() async throws -> Value {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = state.withLock { state -> Swift.Result<Value, any Error>? in
                    if let outcome = state.outcome { return outcome }
                    state.waiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        }
    }

    extension PostgresSharedTier {
        /// Counters since the tier was created.
        public struct Statistics: Sendable, Hashable {
            /// Reads that found a live entry.
            public var hits = 0
            /// Reads that found none (or an expired or damaged one).
            public var misses = 0
            /// Entries stored.
            public var stores = 0
            /// Body bytes stored.
            public var bytesStored = 0
            /// Bodies whose size or checksum did not match; each read was a miss.
            public var damagedBodies = 0
            /// Operations that failed or timed out (each a miss or a skipped write for the chain).
            public var failures = 0
            /// Operations refused at once because the circuit breaker was open.
            public var refusedWhileOpen = 0
            /// Times the circuit breaker opened.
            public var breakerOpenings = 0
            /// Times the database answered again after the breaker had opened.
            public var recoveries = 0
            /// Trims run by this process.
            public var trims = 0
            /// Entries those trims deleted (expired or oldest).
            public var trimmedEntries = 0
            /// Fill locks taken (see ``PostgresSharedTier/lockForFill(forKey:)``).
            public var fillLocks = 0
            /// Fill locks given up after ``Configuration/fillLockTimeout``.
            public var fillLockTimeouts = 0
        }
    }
#endif
