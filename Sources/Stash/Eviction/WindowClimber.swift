/// The hill climber of the ``EvictionPolicy/adaptive`` policy: it sizes the admission window
/// from the regrets of the misses it samples, in the manner of Caffeine's adaptive W-TinyLFU
/// and with ARC's kind of evidence.
///
/// Requests are counted in samples of `sampleSize` requests; the first sample only sets a
/// baseline. During a sample, a miss on an entry that the window (or the main queue) evicted
/// lately is a regret of that queue (see ``RegretLedger``). At the end of each later sample
/// the window's share of the cache moves by `step` towards the queue whose regrets, each
/// weighed by ``weight(ofShare:)`` of its queue's share, exceed the other's by more than two
/// standard deviations of their Poisson noise, and otherwise a quarter step towards the
/// smaller window (a full step up from the floor, to probe). The step decays by 2 % per
/// sample, so the share settles, and jumps back to its full size when the hit rate changes by
/// 5 points or more (the workload changed). Regrets are counted on the same requests for both
/// queues, so a bursty workload, whose hit rate jumps from one sample to the next by far more
/// than sampling noise, does not send the window on a random walk, as comparing successive
/// hit rates did (see "The photo-app trace" in `Benchmarks/POLICIES.md`). A recency-heavy
/// workload, whose entries are read while they are new, grows the window towards an LRU queue
/// of the whole cache; a frequency-heavy one keeps it near the 1 % where the frequency filter
/// guards almost everything. A new climber starts at half the cache (``startingShare``).
///
/// Counting is commutative within a sample, and the climber moves only at a write (a miss),
/// so DiskCache, which applies batched hits before each write, takes the same steps as a
/// replay. Its five fields are persisted with the frequency sketch, so a reopened cache keeps
/// its share; the regrets are not (a reopened cache gathers them afresh).
package struct WindowClimber: Hashable, Sendable {
    /// The smallest share of the cache the window holds.
    package static let minimumShare = 0.01
    /// The largest share of the cache the window holds.
    package static let maximumShare = 0.99
    /// The first step, and the step after a restart: 1/16 of the cache.
    package static let fullStep = 0.0625
    /// What is left of a step after each sample.
    package static let stepDecay = 0.98
    /// A change of the hit rate by this much restarts the climb with a full step.
    package static let restartThreshold = 0.05
    /// How many standard deviations of sampling noise a change of the hit rate must exceed to
    /// count as evidence.
    package static let significance = 2.0
    /// The share of a step taken towards the smaller window when there is no evidence.
    package static let lean = 0.25

    /// The window's share of the cache's bytes (and entries).
    package private(set) var windowShare: Double
    /// The size of the next move of `windowShare`; its sign is the direction of the last move.
    package private(set) var step: Double
    /// The hit rate of the last complete sample, or -1 before the first one: the first sample
    /// only sets the baseline.
    package private(set) var previousHitRate: Double
    /// Hits in the current sample.
    package private(set) var sampleHits: Int
    /// Requests (hits and misses) in the current sample.
    package private(set) var sampleRequests: Int

    /// The share a new climber starts at: the middle of its range.
    ///
    /// A climber starting at 1 % had to cross the steep part of a recency-heavy workload's
    /// curve (on the photo feed at 1 % the miss ratio is 0.43 at a 1 % window, 0.66 at 15 %,
    /// 0.39 at 99 %), which the hit rate's noise kept it from doing within 100 000 requests;
    /// from the middle it descends where frequency pays, the lean to the smaller window doing
    /// the work (see `Benchmarks/POLICIES.md`, "Adapting within one pass").
    package static let startingShare = 0.5

    /// A climber at `share` (``startingShare`` by default), moving down, before its baseline sample.
    package init(startingAt share: Double = Self.startingShare) {
        self.init(
            windowShare: share, step: -Self.fullStep, previousHitRate: -1, sampleHits: 0, sampleRequests: 0)
    }

    /// A climber restored from its persisted fields; out-of-range values are clamped.
    package init(windowShare: Double, step: Double, previousHitRate: Double, sampleHits: Int, sampleRequests: Int) {
        let finite = { (value: Double, fallback: Double) in value.isFinite ? value : fallback }
        self.windowShare = min(Self.maximumShare, max(Self.minimumShare, finite(windowShare, Self.minimumShare)))
        self.step = min(Self.fullStep, max(-Self.fullStep, finite(step, Self.fullStep)))
        self.previousHitRate = min(1, max(-1, finite(previousHitRate, -1)))
        self.sampleRequests = max(0, sampleRequests)
        self.sampleHits = min(self.sampleRequests, max(0, sampleHits))
    }

    /// Counts `count` hits (each one a request).
    package mutating func recordHits(_ count: Int) {
        sampleHits += count
        sampleRequests += count
    }

    /// Counts one miss, then moves the window if a sample of `sampleSize` requests is complete,
    /// by the regrets `regrets` counted during the sample (which it takes).
    ///
    /// The window grows if its regrets, weighed by ``weight(ofShare:)`` of its share, exceed the
    /// main queue's weighed by that of the main queue's share by more than ``significance``
    /// Poisson standard deviations, and shrinks if the main queue's exceed the window's as much.
    package mutating func recordMiss(sampleSize: Int, regrets: inout RegretLedger) {
        sampleRequests += 1
        guard sampleRequests >= max(1, sampleSize) else { return }
        let hitRate = Double(sampleHits) / Double(sampleRequests)
        let (windowRegrets, mainRegrets) = regrets.takeRegrets()
        defer {
            previousHitRate = hitRate
            sampleHits = 0
            sampleRequests = 0
        }
        guard previousHitRate >= 0 else { return }
        let change = hitRate - previousHitRate
        // A regret is worth more in the smaller queue: each of its bytes holds more of what a
        // byte more would have kept. A measured compromise, not a derivation (share^-1 or no
        // weight let a main queue that evicts little, and so collects few regrets, shrink to
        // nothing in the memory tier; see `Benchmarks/POLICIES.md`).
        let window = Self.weight(ofShare: windowShare)
        let main = Self.weight(ofShare: 1 - windowShare)
        let balance = Double(windowRegrets) * window - Double(mainRegrets) * main
        let noise =
            Self.significance
            * (Double(windowRegrets) * window * window + Double(mainRegrets) * main * main).squareRoot()
        let move: Double
        if balance > noise && balance > 0 {
            move = abs(step)  // a larger window would have kept more of what was missed
        } else if -balance > noise && balance < 0 {
            move = -abs(step)  // a larger main queue would have
        } else {
            // No evidence either way: lean to the smaller window (the frequency filter guards
            // more), but probe upwards from the floor, so a recency-heavy workload is found.
            // The lean is a quarter step, so that it drifts where nothing is regretted and is
            // undone by the first significant excess of window regrets.
            move = windowShare <= Self.minimumShare ? abs(step) : -abs(step) * Self.lean
        }
        windowShare = min(Self.maximumShare, max(Self.minimumShare, windowShare + move))
        let direction = move >= 0 ? 1.0 : -1.0
        // A change of the hit rate by 5 points means the workload changed: climb again from a
        // full step. Without the restarts, the photo-app trace's 10 % points were lost.
        step = direction * (abs(change) >= Self.restartThreshold ? Self.fullStep : abs(step) * Self.stepDecay)
    }

    /// How much one regret of a queue holding `share` of the cache weighs: `share^-1/2`.
    package static func weight(ofShare share: Double) -> Double {
        1 / max(share, minimumShare).squareRoot()
    }
}
