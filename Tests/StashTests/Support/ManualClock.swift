@testable import Stash

/// A clock that moves only when a test advances it, to inject into caches as `clock: clock.now`.
final class ManualClock: Sendable {
    private let instant = LockedValue(ContinuousClock.now)

    /// The current time.
    @Sendable func now() -> ContinuousClock.Instant { instant.withLock { $0 } }

    /// Moves the time forward.
    func advance(by duration: Duration) { instant.withLock { $0 += duration } }
}
