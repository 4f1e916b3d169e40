import Foundation
import Testing

@testable import Stash

@Suite struct LockedValueTests {
    /// Threads that hold the lock for much longer than the spin before sleeping (the futex path
    /// on Linux) and threads that hold it briefly (the spinning path) all get exclusive access:
    /// no increment is lost, and no thread ever sees another inside the critical section.
    @Test func givesExclusiveAccessWhetherWaitersSpinOrSleep() {
        struct Counter {
            var total = 0
            var isInside = false
            var overlaps = 0
        }
        let counter = LockedValue(Counter())
        let threads = 8
        let rounds = 2_000
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                for round in 0..<rounds {
                    counter.withLock { counter in
                        if counter.isInside { counter.overlaps += 1 }
                        counter.isInside = true
                        // Every 100th section outlasts any spin (about 50 µs of pauses), so the
                        // others go to sleep on the lock and must be woken.
                        if (round + thread) % 100 == 0 { usleep(200) }
                        counter.total += 1
                        counter.isInside = false
                    }
                }
                done.leave()
            }.start()
        }
        done.wait()
        let final = counter.withLock { $0 }
        #expect(final.total == threads * rounds)
        #expect(final.overlaps == 0)
    }
}
