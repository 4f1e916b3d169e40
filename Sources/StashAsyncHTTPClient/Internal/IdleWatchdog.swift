#if AsyncHTTPClient
    import Foundation
    import Stash

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// Fails a transfer with `URLError(.timedOut)` when it makes no progress for a while:
    /// `URLRequest.timeoutInterval`'s meaning under `URLSession`.
    ///
    /// async-http-client has a read timeout per client and a deadline per request, but a deadline
    /// bounds the whole transfer, which a large body on a slow link may rightly exceed. The watchdog
    /// restarts its countdown whenever ``touch()`` reports progress.
    final class IdleWatchdog: Sendable {
        private let timeout: Duration?
        private let lastActivity: LockedValue<ContinuousClock.Instant>

        /// - Parameter timeout: The longest pause allowed, or `nil` for none.
        init(timeout: Duration?) {
            self.timeout = timeout
            lastActivity = LockedValue(.now)
        }

        /// Records progress: the countdown starts again.
        func touch() {
            let now = ContinuousClock.now
            lastActivity.withLock { $0 = now }
        }

        /// Runs `body`, cancelling it and throwing `URLError(.timedOut)` if it pauses for longer than
        /// the timeout.
        ///
        /// When `body` returns or throws first, the watchdog stops; `run` returns only after both
        /// have finished, so nothing of `body` runs after it.
        func run<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) async throws -> Result {
            guard let timeout else { return try await body() }
            touch()
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await self.expire(after: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                while let finished = try await group.next() {
                    if let result = finished { return result }
                }
                // Only reachable if both children returned without a result, which `expire` never does.
                throw CancellationError()
            }
        }

        /// Sleeps until the transfer has been idle for `timeout`, then throws.
        private func expire(after timeout: Duration) async throws {
            while true {
                let deadline = lastActivity.withLock { $0 } + timeout
                if ContinuousClock.now >= deadline {
                    throw URLError(
                        .timedOut,
                        userInfo: [
                            NSLocalizedDescriptionKey:
                                "No response bytes arrived for \(timeout) (the request's timeoutInterval)."
                        ])
                }
                try await Task.sleep(until: deadline, clock: .continuous)
            }
        }
    }
#endif
