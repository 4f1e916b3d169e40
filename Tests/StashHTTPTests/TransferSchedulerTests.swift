import Testing

@testable import StashHTTP

@Suite struct TransferSchedulerTests {
    /// A slot freed while admissions are held goes to no waiting transfer until the hold ends.
    ///
    /// `ResourceLoader.cancelAll()` holds them while it cancels running and queued transfers
    /// alike: a running transfer that ended at once must not start a queued one whose request
    /// would reach the origin before its own cancellation (seen as a flaky extra request).
    @Test func aSlotFreedWhileAdmissionsAreHeldWaitsForTheHoldToEnd() async throws {
        let scheduler = TransferScheduler(limit: 1)
        try await scheduler.acquire(Transfer(key: "running", priority: .normal)) {}
        let queued = Task { try await scheduler.acquire(Transfer(key: "queued", priority: .normal)) {} }
        while scheduler.queuedCount == 0 { await Task.yield() }

        scheduler.holdingAdmissions {
            scheduler.release()
            #expect(scheduler.runningCount == 0)
            #expect(scheduler.queuedCount == 1)
        }

        try await queued.value
        #expect(scheduler.runningCount == 1)
        #expect(scheduler.queuedCount == 0)
    }
}
