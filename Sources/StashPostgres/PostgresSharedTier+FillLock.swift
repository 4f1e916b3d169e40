#if Postgres
    import Foundation
    import Logging
    import PostgresNIO
    import Stash

    extension PostgresSharedTier {
        /// Takes a session-level advisory lock on `key` on a pooled connection, held until
        /// `SharedTierFillLock.release()` (or the connection's end, if this process dies).
        ///
        /// Waits at most ``Configuration/fillLockTimeout`` for another holder; then returns `nil`
        /// and the caller fetches without the lock.
        ///
        /// - Parameter key: The key about to be fetched from the origin.
        /// - Returns: The held lock, or `nil` after the wait timed out.
        /// - Throws: `StashError` with `StashError.Code.transport` when the database
        ///   failed or the breaker is open.
        /// - Complexity: One round trip, plus the wait.
        public func lockForFill(forKey key: String) async throws -> (any SharedTierFillLock)? {
            if breaker.admit() == .refused {
                counters.withLock { $0.refusedWhileOpen += 1 }
                throw StashError(
                    .transport, "The PostgreSQL shared tier at \(endpoint) is not answering (breaker open).")
            }
            let lock = FillLock()
            let client = client
            let logger = logger
            let timeoutMilliseconds = Int64(Self.seconds(configuration.fillLockTimeout) * 1000)
            let holder = Task {
                do {
                    try await client.withConnection { connection in
                        try await connection.query(
                            "SELECT set_config('lock_timeout', \(String(timeoutMilliseconds)), false)", logger: logger)
                        do {
                            try await connection.query(
                                "SELECT pg_advisory_lock(hashtextextended(\(key), 1))", logger: logger)
                        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                            try await connection.query("SELECT set_config('lock_timeout', '0', false)", logger: logger)
                            lock.acquired(.timedOut)
                            return
                        }
                        // The caller may have given up meanwhile (see the timer below): unlock at once.
                        if lock.acquired(.held) { await lock.waitForRelease() }
                        try await connection.query(
                            "SELECT pg_advisory_unlock(hashtextextended(\(key), 1))", logger: logger)
                        try await connection.query("SELECT set_config('lock_timeout', '0', false)", logger: logger)
                    }
                } catch {
                    lock.acquired(.failed(error))
                }
                lock.finished()
            }
            _ = holder
            let deadline = configuration.fillLockTimeout + configuration.operationTimeout
            let timer = Task {
                try await Task.sleep(for: deadline)
                lock.acquired(.failed(StashError(.transport, "Waiting for a connection took longer than \(deadline).")))
            }
            let acquisition = await lock.waitForAcquisition()
            timer.cancel()
            switch acquisition {
            case .held:
                _ = breaker.succeeded()
                counters.withLock { $0.fillLocks += 1 }
                return lock
            case .timedOut:
                _ = breaker.succeeded()
                counters.withLock { $0.fillLockTimeouts += 1 }
                return nil
            case .failed(let error):
                counters.withLock { $0.failures += 1 }
                if breaker.failed() == .opened {
                    counters.withLock { $0.breakerOpenings += 1 }
                    logger.warning(
                        "PostgreSQL shared tier failing; serving from local tiers and the origin for now",
                        metadata: ["endpoint": "\(endpoint)", "error": "\(String(reflecting: error))"])
                }
                throw StashError(
                    .transport, "The PostgreSQL shared tier at \(endpoint) cannot lock '\(key)'.", cause: error)
            }
        }
    }

    /// A held advisory lock: a task that keeps a pooled connection until ``release()``.
    final class FillLock: SharedTierFillLock {
        enum Acquisition: Sendable {
            case held
            case timedOut
            case failed(any Error)
        }

        private struct State {
            var acquisition: Acquisition?
            var acquisitionWaiter: CheckedContinuation<Acquisition, Never>?
            var isReleased = false
            var releaseWaiter: CheckedContinuation<Void, Never>?
            var isFinished = false
            var finishWaiters: [CheckedContinuation<Void, Never>] = []
        }

        private let state = LockedValue(State())

        /// Records how the acquisition ended, unless it already has; returns whether this call decided it.
        @discardableResult
        func acquired(_ acquisition: Acquisition) -> Bool {
            let (decided, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Acquisition, Never>?) in
                guard state.acquisition == nil else { return (false, nil) }
                state.acquisition = acquisition
                defer { state.acquisitionWaiter = nil }
                return (true, state.acquisitionWaiter)
            }
            waiter?.resume(returning: acquisition)
            return decided
        }

        func waitForAcquisition() async -> Acquisition {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Acquisition? in
                    if let acquisition = state.acquisition { return acquisition }
                    state.acquisitionWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        func waitForRelease() async {
            await withCheckedContinuation { continuation in
                let released = state.withLock { state -> Bool in
                    if state.isReleased { return true }
                    state.releaseWaiter = continuation
                    return false
                }
                if released { continuation.resume() }
            }
        }

        func finished() {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.isFinished = true
                defer { state.finishWaiters = [] }
                return state.finishWaiters
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Releases the lock and waits until the connection has unlocked it.
        func release() async {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.isReleased = true
                defer { state.releaseWaiter = nil }
                return state.releaseWaiter
            }
            waiter?.resume()
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Bool in
                    if state.isFinished { return true }
                    state.finishWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }
#endif
