import Testing

@testable import Stash

@Suite struct MutationTrackerTests {
    private let tracker = MutationTracker()

    @Test func aMutationAloneDoesNotOverlapAndLeavesNoState() {
        let ticket = tracker.begin("a")
        #expect(tracker.trackedKeyCount == 1)
        #expect(tracker.end(ticket) == false)
        #expect(tracker.trackedKeyCount == 0)
    }

    @Test func mutationsOfDifferentKeysDoNotOverlap() {
        let a = tracker.begin("a")
        let b = tracker.begin("b")
        let read = tracker.beginRead("c")
        #expect(tracker.end(a) == false)
        #expect(tracker.end(b) == false)
        #expect(tracker.isUnchanged(since: read))
        tracker.endRead(read)
        #expect(tracker.trackedKeyCount == 0)
    }

    @Test func overlappingMutationsOfOneKeyBothReportTheOverlap() {
        let first = tracker.begin("k")
        let second = tracker.begin("k")
        #expect(tracker.end(first))
        #expect(tracker.end(second))

        let third = tracker.begin("k")  // begins and ends inside the fourth's run
        let fourth = tracker.begin("k")
        #expect(tracker.end(third))
        #expect(tracker.end(fourth))
        #expect(tracker.trackedKeyCount == 0)
    }

    @Test func aMutationThatBeginsAndEndsDuringAReadChangesIt() {
        let read = tracker.beginRead("k")
        #expect(tracker.isUnchanged(since: read))
        #expect(tracker.end(tracker.begin("k")) == false)
        #expect(tracker.isUnchanged(since: read) == false)
        tracker.endRead(read)
        #expect(tracker.trackedKeyCount == 0)
    }

    @Test func aReadThatBeginsDuringAMutationIsNeverClean() {
        let ticket = tracker.begin("k")
        let read = tracker.beginRead("k")
        #expect(tracker.end(ticket) == false)  // a read does not make a mutation overlap
        #expect(tracker.isUnchanged(since: read) == false)
        tracker.endRead(read)
    }

    @Test func keysDifferingOnlyInNormalisationAreTrackedApart() {
        let read = tracker.beginRead(CacheKey("caf\u{E9}"))
        #expect(tracker.end(tracker.begin(CacheKey("cafe\u{301}"))) == false)
        #expect(tracker.isUnchanged(since: read))
        tracker.endRead(read)
    }

    @Test func removeAllOverlapsEveryKey() {
        let read = tracker.beginRead("a")
        let mutation = tracker.begin("b")
        let all = tracker.beginAll()
        #expect(tracker.isUnchanged(since: read) == false)
        let during = tracker.begin("c")
        #expect(tracker.end(all))  // "b" was in progress
        #expect(tracker.end(mutation))
        #expect(tracker.end(during))
        tracker.endRead(read)
        #expect(tracker.end(tracker.beginAll()) == false)
        #expect(tracker.trackedKeyCount == 0)
    }
}
