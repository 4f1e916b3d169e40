import Foundation
import Testing

@testable import Stash

/// Hits are recorded in memory and reach the index off the reading thread: in the background
/// within the configured delay or batch, on close, and from every process that reads.
@Suite struct DiskCacheAccessFlushTests {
    /// A connection of the test's own on the cache's index, to see what the cache committed.
    struct IndexObserver {
        let db: SQLiteConnection
        let walPath: String

        init(_ directory: URL) throws {
            let path = DiskIndex.databasePath(inRoot: directory.standardizedFileURL.path)
            db = try SQLiteConnection(path: path, busyTimeout: .seconds(5), createsFile: false)
            walPath = path + "-wal"
        }

        /// Changes whenever another connection commits to the database.
        func dataVersion() throws -> Int { try db.first("PRAGMA data_version") { $0.int(0) } ?? -1 }
        func walSize() -> Int { POSIXFile.size(walPath)?.logical ?? 0 }
        func accessed(_ key: String) throws -> Double? {
            try db.first(
                "SELECT s.accessed FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1",
                [.blob(Data(key.utf8))]
            ) { $0.double(0) }
        }
        /// The entry's hit counter (a reference bit in the adaptive window) as committed.
        func frequency(_ key: String) throws -> Int? {
            try db.first(
                "SELECT s.frequency FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1",
                [.blob(Data(key.utf8))]
            ) { $0.int(0) }
        }
    }

    /// A one-shot signal for hooks that run on the cache's background queue.
    final class Signal: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        func fire() { semaphore.signal() }
        /// Waits for `fire`; the generous timeout only turns a hang into a failure.
        func wait() -> Bool { semaphore.wait(timeout: .now() + 60) == .success }
    }

    @Test func aBurstOfTenThousandHitsWritesNothingToTheIndexUntilTheBackgroundFlush() throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    reclaimsOrphansOnOpen: false, accessFlushBatch: 1000, accessFlushDelay: .seconds(3600),
                    clock: clock.function))
            for i in 0..<2000 { try cache.store(Data("value \(i)".utf8), forKey: "key-\(i)") }
            try cache.flush()
            // The background write is held at its start, so that nothing but the reading thread
            // could have written while the burst runs.
            let gate = Signal()
            let written = LockedValue<[Int]>([])
            let flushed = Signal()
            cache.accessFlushHooks.withLock { hooks in
                hooks.willWrite = { _ = gate.wait() }
                hooks.didWrite = { count in
                    written.withLock { $0.append(count) }
                    flushed.fire()
                }
            }
            let observer = try IndexObserver(dir)
            let versionBefore = try observer.dataVersion()
            let walBefore = observer.walSize()
            let accessedBefore = try observer.accessed("key-7")
            clock.advance(by: 60)

            for i in 0..<10_000 { #expect(try cache.data(forKey: "key-\(i % 2000)") != nil) }

            #expect(try observer.dataVersion() == versionBefore)
            #expect(observer.walSize() == walBefore)
            #expect(try observer.accessed("key-7") == accessedBefore)
            gate.fire()
            #expect(flushed.wait())
            #expect(written.withLock { $0 } == [2000])
            #expect(try observer.dataVersion() != versionBefore)
            #expect(try observer.accessed("key-7") == clock.date.timeIntervalSince1970)
            cache.close()
        }
    }

    @Test func closeWritesTheHitsStillInMemory() throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    reclaimsOrphansOnOpen: false, accessFlushDelay: .seconds(3600), clock: clock.function))
            try cache.store(Data("a".utf8), forKey: "a")
            try cache.flush()
            let observer = try IndexObserver(dir)
            let stored = try #require(try observer.accessed("a"))
            clock.advance(by: 30)
            #expect(try cache.data(forKey: "a") == Data("a".utf8))
            #expect(try observer.accessed("a") == stored)

            cache.close()

            #expect(try observer.accessed("a") == stored + 30)
        }
    }

    @Test func aHitThatChangesNoPolicyStateWritesNothingUntilItsAccessTimeIsAMinuteOld() throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    evictionPolicy: .firstInFirstOut, reclaimsOrphansOnOpen: false,
                    accessFlushDelay: .seconds(3600), clock: clock.function))
            try cache.store(Data("a".utf8), forKey: "a")
            try cache.flush()
            let observer = try IndexObserver(dir)
            let stored = try #require(try observer.accessed("a"))
            let versionBefore = try observer.dataVersion()

            // FIFO ignores reads: within the resolution, the flush has nothing to write.
            clock.advance(by: DiskCache.accessTimeResolution - 1)
            #expect(try cache.data(forKey: "a") == Data("a".utf8))
            #expect(try cache.flushAccesses() == 1)
            #expect(try observer.dataVersion() == versionBefore)
            #expect(try observer.accessed("a") == stored)

            clock.advance(by: 2)
            #expect(try cache.data(forKey: "a") == Data("a".utf8))
            #expect(try cache.flushAccesses() == 1)
            #expect(try observer.dataVersion() != versionBefore)
            #expect(try observer.accessed("a") == stored + DiskCache.accessTimeResolution + 1)
            cache.close()
        }
    }

    @Test func hitsOnEntriesWhoseStateIsKnownAndUnchangedLookNothingUp() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(reclaimsOrphansOnOpen: false, accessFlushDelay: .seconds(3600)))
            let keys = (0..<100).map { "key-\($0)" }
            for key in keys { try cache.store(Data(key.utf8), forKey: key) }
            try cache.flush()
            func readAllAndFlush() throws -> Int {
                let before = cache.hitWriteLookups.withLock { $0 }
                for key in keys { #expect(try cache.data(forKey: key) == Data(key.utf8)) }
                #expect(try cache.flushAccesses() == keys.count)
                return cache.hitWriteLookups.withLock { $0 } - before
            }

            // The first batch sets each entry's reference bit; the second finds nothing to change
            // and, knowing the states it wrote, reads no row either.
            #expect(try readAllAndFlush() == keys.count)
            #expect(try readAllAndFlush() == 0)
            // A store changes the index: what the batches knew is dropped, and read again.
            try cache.store(Data("other".utf8), forKey: "other")
            try cache.flush()
            #expect(try readAllAndFlush() == keys.count)
            #expect(try readAllAndFlush() == 0)
            cache.close()
        }
    }

    @Test func aHitAfterAnotherConnectionRewroteTheEntryIsWrittenAgain() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(reclaimsOrphansOnOpen: false, accessFlushDelay: .seconds(3600))
            let reader = try DiskCache(directory: dir, configuration: configuration)
            let writer = try DiskCache(directory: dir, configuration: configuration)
            try writer.store(Data("v1".utf8), forKey: "k")
            try writer.flush()
            let observer = try IndexObserver(dir)
            #expect(try reader.data(forKey: "k") == Data("v1".utf8))
            try reader.flushAccesses()
            #expect(try observer.frequency("k") == 1)

            // Another connection, then the reader's own, removes the entry and stores the key
            // anew: a new entry, not yet read, whose first read must be written again.
            for (round, rewriter) in [writer, reader].enumerated() {
                let value = Data("v\(round + 2)".utf8)
                try rewriter.removeData(forKey: "k")
                try rewriter.store(value, forKey: "k")
                try rewriter.flush()
                #expect(try observer.frequency("k") == 0, "round \(round)")
                #expect(try reader.data(forKey: "k") == value)
                try reader.flushAccesses()
                #expect(try observer.frequency("k") == 1, "round \(round)")
            }
            reader.close()
            writer.close()
        }
    }

    @Test func hitsWrittenInATransactionThatRolledBackAreLookedUpAndWrittenAgain() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(reclaimsOrphansOnOpen: false, accessFlushDelay: .seconds(3600)))
            try cache.store(Data("v".utf8), forKey: "k")
            try cache.flush()
            let observer = try IndexObserver(dir)
            #expect(try cache.data(forKey: "k") == Data("v".utf8))
            // A pinned store writes its value to a file inside its transaction, after it wrote the
            // pending hits: failing that write rolls the hits back with it.
            cache.faults.withLock { $0.write = { _ in EIO } }
            #expect(throws: StashError.self) { try cache.store(Data("p".utf8), forKey: "pinned", pinned: true) }
            cache.faults.withLock { $0.write = nil }
            #expect(try observer.frequency("k") == 0)

            let lookups = cache.hitWriteLookups.withLock { $0 }
            #expect(try cache.data(forKey: "k") == Data("v".utf8))
            #expect(try cache.flushAccesses() == 1)
            #expect(cache.hitWriteLookups.withLock { $0 } == lookups + 1)
            #expect(try observer.frequency("k") == 1)
            cache.close()
        }
    }

    @Test func aHitReachesTheIndexAfterTheFlushDelayAndNotBefore() throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    reclaimsOrphansOnOpen: false, accessFlushDelay: .milliseconds(200), clock: clock.function))
            try cache.store(Data("a".utf8), forKey: "a")
            try cache.flush()
            let observer = try IndexObserver(dir)
            let stored = try #require(try observer.accessed("a"))
            let flushed = Signal()
            let writeStarted = LockedValue<ContinuousClock.Instant?>(nil)
            cache.accessFlushHooks.withLock { hooks in
                hooks.willWrite = { writeStarted.withLock { $0 = .now } }
                hooks.didWrite = { _ in flushed.fire() }
            }
            clock.advance(by: 5)
            let hit = ContinuousClock.now

            #expect(try cache.data(forKey: "a") != nil)

            #expect(flushed.wait())
            let started = try #require(writeStarted.withLock { $0 })
            #expect(started - hit >= .milliseconds(200))
            #expect(try observer.accessed("a") == stored + 5)
            cache.close()
        }
    }

    @Test func hitsFromTwoOtherProcessesBothProtectTheirEntriesFromEviction() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    countLimit: 4, lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed,
                    reclaimsOrphansOnOpen: false))
            for key in ["a", "b", "c", "d"] { try cache.store(Data(key.utf8), forKey: key) }
            try cache.flush()
            let readers = try ["a", "b"].map { key in try Worker.start(["hit", dir.path, key, "3"]) }
            for (process, output) in readers {
                let printed = String(decoding: Worker.readToEnd(output), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
                #expect(printed == "ok\n")
            }

            try cache.store(Data("e".utf8), forKey: "e")
            try cache.store(Data("f".utf8), forKey: "f")
            try cache.flush()

            #expect(try cache.allKeys.sorted() == ["a", "b", "e", "f"])
            cache.close()
        }
    }
}
