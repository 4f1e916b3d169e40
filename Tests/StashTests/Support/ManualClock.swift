@testable import Stash

/// A clock that moves only when a test advances it, to inject into caches as `clock: clock.now`.
final class ManualClock: Sendable {
    private let state = LockedValue((instant: ContinuousClock.now, reads: 0))

    /// The current time.
    @Sendable func now() -> ContinuousClock.Instant {
        state.withLock { state in
            state.reads += 1
            return state.instant
        }
    }

    /// How many times ``now()`` has been called.
    var reads: Int { state.withLock { $0.reads } }

    /// Moves the time forward.
    func advance(by duration: Duration) { state.withLock { $0.instant += duration } }
}
