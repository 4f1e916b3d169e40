import Foundation
import Testing

@testable import Stash

@Suite struct RegretLedgerTests {
    @Test func aMissOnAGhostIsARegretOfTheQueueItLeftOnce() {
        var ledger = RegretLedger()
        ledger.remember(1, size: 100, leaving: .window)
        ledger.remember(2, size: 100, leaving: .main)
        ledger.remember(3, size: 100, leaving: .main)
        ledger.recordMiss(of: 2)
        ledger.recordMiss(of: 2)  // its ghost is gone
        ledger.recordMiss(of: 1)
        ledger.recordMiss(of: 4)  // never evicted
        #expect(ledger.takeRegrets() == (window: 1, main: 1))
        #expect(ledger.takeRegrets() == (window: 0, main: 0))
        #expect(ledger.count == 1)
    }

    @Test func onlyEvictionsWithinTheHorizonOfTheirOwnQueueAreRegretted() {
        var ledger = RegretLedger()
        ledger.setLimits(capacity: 1600, countLimit: .max, entries: 10)
        #expect(ledger.horizon == RegretLedger.Clock(bytes: 100, entries: .max))
        ledger.remember(1, size: 10, leaving: .main)
        ledger.remember(2, size: 10, leaving: .main)
        // The window's evictions do not age the main queue's ghosts.
        for fingerprint in Int64(100)..<110 { ledger.remember(fingerprint, size: 50, leaving: .window) }
        ledger.remember(3, size: 90, leaving: .main)  // 1 is now 100 bytes back, 2 is 90
        ledger.recordMiss(of: 1)
        ledger.recordMiss(of: 2)
        #expect(ledger.takeRegrets() == (window: 0, main: 1))
        #expect(ledger.clock(of: .main) == RegretLedger.Clock(bytes: 110, entries: 3))
        #expect(ledger.clock(of: .window) == RegretLedger.Clock(bytes: 500, entries: 10))
        // Under a count limit the horizon is also 1/16 of its entries.
        ledger.setLimits(capacity: .max, countLimit: 16, entries: 10)
        for fingerprint in Int64(200)..<202 { ledger.remember(fingerprint, size: 1 << 40, leaving: .window) }
        ledger.recordMiss(of: 200)  // one entry back: beyond the horizon of one entry
        ledger.recordMiss(of: 201)
        #expect(ledger.takeRegrets() == (window: 1, main: 0))
    }

    @Test func aFullTableKeepsTheNewestGhosts() {
        var ledger = RegretLedger()
        #expect(ledger.capacity == 0, "no table before the first eviction")
        for fingerprint in Int64(0)..<20_000 { ledger.remember(fingerprint &* 7919, size: 10, leaving: .main) }
        #expect(ledger.capacity == RegretLedger.minimumSlots)
        #expect(ledger.count == RegretLedger.minimumSlots, "every slot holds a ghost")
        for fingerprint in Int64(0)..<1000 { ledger.recordMiss(of: fingerprint &* 7919) }
        #expect(ledger.takeRegrets() == (window: 0, main: 0), "the oldest ghosts were displaced")
        for fingerprint in Int64(19_744)..<20_000 { ledger.recordMiss(of: fingerprint &* 7919) }
        let newest = ledger.takeRegrets()
        #expect(newest.main > 200, "of the newest 256 ghosts, \(newest.main) were kept")
    }

    @Test func theTableGrowsWithItsGhostsUpToOneSlotPerTwoEntriesAndKeepsEveryGhost() {
        var ledger = RegretLedger()
        for fingerprint in Int64(0)..<400 { ledger.remember(fingerprint &* 7919, size: 1, leaving: .window) }
        #expect(ledger.capacity == RegretLedger.minimumSlots)  // no cache named: the smallest table
        var grown = ledger
        grown.setLimits(capacity: .max, countLimit: .max, entries: 100_000)
        #expect(grown.capacity == 2048)  // four slots per ghost written, a power of two
        for fingerprint in Int64(0)..<400 {
            ledger.recordMiss(of: fingerprint &* 7919)
            grown.recordMiss(of: fingerprint &* 7919)
        }
        let kept = grown.takeRegrets()
        #expect(kept == ledger.takeRegrets())
        #expect(kept.window > 350, "two-slot buckets lose few of 400 ghosts in 1024 slots: \(kept.window)")

        // More ghosts widen the table, keeping the ghosts it holds, up to one slot per two entries.
        var wider = grown
        for fingerprint in Int64(1000)..<1500 { wider.remember(fingerprint &* 7919, size: 1, leaving: .main) }
        #expect(wider.capacity == 4096)
        for fingerprint in Int64(1000)..<1500 { wider.recordMiss(of: fingerprint &* 7919) }
        let main = wider.takeRegrets().main
        #expect(main >= 495, "a widening keeps the ghosts; \(main) of 500 found")
        for fingerprint in Int64(2000)..<40_000 { wider.remember(fingerprint &* 7919, size: 1, leaving: .window) }
        #expect(wider.capacity == 65_536)
        for fingerprint in Int64(40_000)..<200_000 { wider.remember(fingerprint &* 7919, size: 1, leaving: .window) }
        #expect(wider.capacity == 65_536, "one slot per two of the 100 000 entries at most")
    }

    @Test func theFirstEvictionOfALargeCacheAllocatesASmallTable() {
        var ledger = RegretLedger()
        #expect(ledger.capacity == 0)
        ledger.setLimits(capacity: 1 << 30, countLimit: .max, entries: 1_000_000)
        #expect(ledger.capacity == RegretLedger.minimumSlots)  // not 524 288 slots (16 MiB) at once
        for fingerprint in Int64(0)..<300 { ledger.remember(fingerprint, size: 1024, leaving: .window) }
        #expect(ledger.capacity == 2048)
    }

    @Test func aCacheThatReopensForgetsItsGhostsButKeepsItsWindow() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .bytes(20_000), accessFlushBatch: 16)
            var cache = try DiskCache(directory: dir, configuration: configuration)
            for index in 0..<200 { try cache.store(Data(count: 1000), forKey: "key-\(index)") }
            try cache.flush()
            let before = try #require(cache.sketchSlot.withLock { $0.sketch })
            // Every eviction advanced its queue's clock and left a ghost.
            let evicted = before.regrets.clock(of: .window).entries + before.regrets.clock(of: .main).entries
            #expect(try evicted == 200 - cache.totalCount)
            #expect(before.regrets.count > 0)
            cache.close()
            cache = try DiskCache(directory: dir, configuration: configuration)
            try cache.index.write { db in try cache.synchronizeSketch(in: db) }
            let after = try #require(cache.sketchSlot.withLock { $0.sketch })
            #expect(after.regrets.count == 0)
            #expect(after.climber == before.climber)
        }
    }

    @Test func aSketchAnotherProcessWroteReplacesTheCopyButNotItsGhosts() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .bytes(20_000), accessFlushBatch: 16)
            let cache = try DiskCache(directory: dir, configuration: configuration)
            let other = try DiskCache(directory: dir, configuration: configuration)
            for index in 0..<200 { try cache.store(Data(count: 1000), forKey: "key-\(index)") }
            try cache.flush()
            let (before, generation) = try #require(
                cache.sketchSlot.withLock { slot in slot.sketch.map { ($0, slot.generation) } })
            for index in 0..<50 { try other.store(Data(count: 10), forKey: "other-\(index)") }
            try other.flush()
            other.close()  // writes its sketch under a new generation
            try cache.store(Data(count: 1000), forKey: "late")  // reloads it
            try cache.flush()
            let (after, reloaded) = try #require(
                cache.sketchSlot.withLock { slot in slot.sketch.map { ($0, slot.generation) } })
            #expect(reloaded != generation)
            func evicted(_ sketch: FrequencySketch) -> Int {
                sketch.regrets.clock(of: .window).entries + sketch.regrets.clock(of: .main).entries
            }
            #expect(
                evicted(after) >= evicted(before), "\(evicted(after)) evictions remembered, \(evicted(before)) before")
            #expect(evicted(before) > 150)
        }
    }
}
