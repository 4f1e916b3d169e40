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

    @Test func ghostsOlderThanTwoHorizonsOrBeyondTheLimitAreForgotten() {
        var ledger = RegretLedger()
        ledger.setLimits(capacity: 1600, countLimit: .max, entries: 10)
        for fingerprint in Int64(0)..<100 { ledger.remember(fingerprint, size: 10, leaving: .main) }
        // Two horizons are 200 bytes: the ghosts of the last 20 entries (the newest stamped at 0
        // bytes back, the oldest kept at 190).
        #expect(ledger.count == 20)
        // Without a byte horizon, each queue keeps at most as many ghosts as the cache holds
        // entries, and at least 1024.
        ledger.setLimits(capacity: .max, countLimit: .max, entries: 2000)
        for fingerprint in Int64(1000)..<6000 { ledger.remember(fingerprint, size: 0, leaving: .window) }
        #expect(ledger.count == 20 + 2000)
        ledger.setLimits(capacity: .max, countLimit: .max, entries: 10)
        ledger.remember(9999, size: 0, leaving: .window)
        #expect(ledger.count == 20 + RegretLedger.minimumGhostLimit)
        // A fingerprint remembered again is one ghost, the newer.
        ledger.recordMiss(of: 9999)
        _ = ledger.takeRegrets()
        ledger.remember(5999, size: 0, leaving: .main)
        ledger.recordMiss(of: 5999)
        #expect(ledger.takeRegrets() == (window: 0, main: 1))
    }

    @Test func aCacheThatReopensForgetsItsGhostsButKeepsItsWindow() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .bytes(20_000), accessFlushBatch: 16)
            var cache = try DiskCache(directory: dir, configuration: configuration)
            for index in 0..<200 { try cache.store(Data(count: 1000), forKey: "key-\(index)") }
            let before = try #require(cache.sketchSlot.withLock { $0.sketch })
            // Every eviction advanced its queue's clock; the ghosts of the last two horizons
            // (1/8 of the cache per queue) are kept.
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
}
