#if Postgres
    import Foundation
    import Stash

    /// Stops calls to a backend that keeps failing, then lets one probe through after a cool-down.
    ///
    /// Closed: every call goes through; `threshold` consecutive failures open it. Open: calls are
    /// refused at once (no connection attempt, no timeout to wait for) until `cooldown` has passed;
    /// then one call is let through as a probe (half-open) while the others are still refused. The
    /// probe's success closes the breaker, its failure opens it for another cool-down.
    final class CircuitBreaker: Sendable {
        enum Decision: Equatable {
            case allowed
            case probe
            case refused
        }

        enum Transition: Equatable {
            case none
            case opened
            case closed
        }

        private struct State {
            var consecutiveFailures = 0
            var openUntil: Date?
            var isProbing = false
        }

        private let state = LockedValue(State())
        private let threshold: Int
        private let cooldown: TimeInterval
        private let clock: @Sendable () -> Date

        init(threshold: Int, cooldown: Duration, clock: @escaping @Sendable () -> Date) {
            self.threshold = max(1, threshold)
            self.cooldown = Double(cooldown.components.seconds) + Double(cooldown.components.attoseconds) / 1e18
            self.clock = clock
        }

        /// Whether a call may go to the backend now.
        func admit() -> Decision {
            let now = clock()
            return state.withLock { state in
                guard let openUntil = state.openUntil else { return .allowed }
                if now < openUntil || state.isProbing { return .refused }
                state.isProbing = true
                return .probe
            }
        }

        /// Whether the breaker is open (refusing calls, or waiting for a probe's answer).
        var isOpen: Bool { state.withLock { $0.openUntil != nil } }

        /// Records a successful call.
        func succeeded() -> Transition {
            state.withLock { state in
                state.consecutiveFailures = 0
                state.isProbing = false
                guard state.openUntil != nil else { return .none }
                state.openUntil = nil
                return .closed
            }
        }

        /// Records a failed call (a refused call is not one).
        func failed() -> Transition {
            let now = clock()
            return state.withLock { state in
                state.consecutiveFailures += 1
                let wasOpen = state.openUntil != nil
                state.isProbing = false
                guard wasOpen || state.consecutiveFailures >= threshold else { return .none }
                state.openUntil = now.addingTimeInterval(cooldown)
                return wasOpen ? .none : .opened
            }
        }
    }
#endif
