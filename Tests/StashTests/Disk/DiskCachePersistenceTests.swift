import Foundation
import Testing

@testable import Stash

@Suite struct DiskCachePersistenceTests {
    @Test func valuesTotalsAccessOrderAndPinsSurviveReopening() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(200_000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed)
            do {
                let cache = try DiskCache(directory: dir, configuration: configuration)
                for i in 0..<4 { try cache.store(pattern(40_000, seed: UInt64(i)), forKey: "k\(i)") }
                try cache.store(pattern(1000, seed: 9), forKey: "pinned", pinned: true)
                _ = try cache.data(forKey: "k0")  // recorded in memory only, flushed by close()
                cache.close()
            }
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(try cache.totalCount == 5)
            #expect(try cache.totalSize.bytes == 161_000)
            #expect(try cache.pinnedSize.bytes == 1000)
            #expect(try cache.attributes(forKey: "pinned")?.isPinned == true)
            for i in 0..<4 { #expect(try cache.attributes(forKey: "k\(i)")?.size == 40_000) }
            // k1 and k2 are now the least recently used: k0 was read before the restart.
            try cache.store(pattern(120_000, seed: 5), forKey: "new")
            #expect(Set(try cache.allKeys) == ["k0", "k3", "pinned", "new"])
            #expect(try cache.data(forKey: "k0") == pattern(40_000, seed: 0))
            #expect(try cache.data(forKey: "pinned") == pattern(1000, seed: 9))
        }
    }

    @Test func accessesAreBatchedRatherThanWrittenPerHit() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(evictionPolicy: .leastRecentlyUsed, accessFlushBatch: 1000))
            try cache.store(Data("v".utf8), forKey: "k")
            try cache.flush()
            let before = try #require(try rawAccessTime(dir, key: "k"))
            for _ in 0..<100 { _ = try cache.data(forKey: "k") }
            // No hit reached the index yet; attributes still report the latest access.
            #expect(try rawAccessTime(dir, key: "k") == before)
            try cache.flushAccesses()
            #expect(try #require(try rawAccessTime(dir, key: "k")) >= before)
            #expect(try rawRank(dir, key: "k") == 2)
        }
    }

    @Test func orphanFilesFromACrashAreReclaimedInTheBackgroundAfterOpening() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
                try cache.store(pattern(50_000, seed: 1), forKey: "kept")
                cache.close()  // also waits for the background orphan collection
            }
            // What a crash between rename and commit, or mid-write, leaves behind.
            let orphanDirectory = dir.appendingPathComponent("data/ab/cd")
            try FileManager.default.createDirectory(at: orphanDirectory, withIntermediateDirectories: true)
            try pattern(1234, seed: 2).write(to: orphanDirectory.appendingPathComponent("abcd0000"))
            try pattern(99, seed: 3).write(to: dir.appendingPathComponent("tmp/dead.tmp"))
            let events = LockedValue([String]())
            let cache = try DiskCache(
                directory: dir, configuration: .init(onEvent: { event in events.withLock { $0.append("\(event)") } }))
            cache.waitForBackgroundWork()
            #expect(events.withLock { $0 } == ["reclaimed 2 orphan files (1333 bytes)"])
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 1)
            #expect(try cache.data(forKey: "kept") == pattern(50_000, seed: 1))
        }
    }

    private func rawAccessTime(_ dir: URL, key: String) throws -> Double? {
        let db = try SQLiteConnection(path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(1))
        return try db.first(
            "SELECT s.accessed FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1", [.blob(Data(key.utf8))]
        ) { $0.double(0) }
    }

    private func rawRank(_ dir: URL, key: String) throws -> Int? {
        let db = try SQLiteConnection(path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(1))
        return try db.first(
            "SELECT s.rank FROM entries e JOIN states s ON s.seq = e.seq WHERE e.key = ?1", [.blob(Data(key.utf8))]
        ) { $0.int(0) }
    }
}

@Suite struct DiskCacheDamageTests {
    @Test func valueFileDeletedOrTruncatedBehindTheCachesBackIsAMiss() throws {
        try withTemporaryDirectory { dir in
            let events = LockedValue([DiskCache.Event]())
            let cache = try DiskCache(
                directory: dir, configuration: .init(onEvent: { event in events.withLock { $0.append(event) } }))
            try cache.store(pattern(100_000, seed: 1), forKey: "deleted")
            try cache.store(pattern(100_000, seed: 2), forKey: "truncated")
            try FileManager.default.removeItem(at: try #require(try cache.fileURL(forKey: "deleted")))
            let truncated = try #require(try cache.fileURL(forKey: "truncated"))
            try pattern(10, seed: 2).write(to: truncated)
            #expect(try cache.data(forKey: "deleted") == nil)
            #expect(try cache.data(forKey: "truncated") == nil)
            #expect(try cache.totalCount == 0)
            #expect(try cache.totalSize == .zero)
            #expect(cache.statistics.damagedEntries == 2)
            // Only the drops: the orphan collector that opening starts in the background may
            // run late (on a loaded machine) and report the dropped entries' files as well.
            let dropped = events.withLock { events in
                events.compactMap { event -> String? in
                    if case .droppedDamagedEntry(let key, _) = event { return key }
                    return nil
                }
            }
            #expect(dropped == ["deleted", "truncated"])
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func corruptedBytesAreCaughtByChecksumsOnReadAndByVerify() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
                try cache.store(pattern(100_000, seed: 1), forKey: "k")
                var bytes = try Data(contentsOf: try #require(try cache.fileURL(forKey: "k")))
                bytes[5000] ^= 0xFF
                try bytes.write(to: try #require(try cache.fileURL(forKey: "k")))
                let report = try cache.verify()
                #expect(report.damagedEntries.map(\.key) == ["k"])
                #expect(!report.repaired)
                cache.close()
            }
            let verifying = try DiskCache(directory: dir, configuration: .init(verifiesChecksums: true))
            #expect(try verifying.data(forKey: "k") == nil)
            #expect(try verifying.totalCount == 0)
        }
    }

    @Test func verifyRepairsDamageAndWrongTotals() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            try cache.store(pattern(100_000, seed: 1), forKey: "broken")
            try cache.store(pattern(10, seed: 2), forKey: "fine")
            try FileManager.default.removeItem(at: try #require(try cache.fileURL(forKey: "broken")))
            let db = try SQLiteConnection(
                path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(1))
            try db.execute("UPDATE totals SET size = 5 WHERE id = 1")
            db.close()
            let report = try cache.verify(repair: true)
            #expect(report.damagedEntries.map(\.key) == ["broken"])
            #expect(report.totalsMismatch)
            #expect(report.repaired)
            #expect(try cache.totalSize.bytes == 10)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test(arguments: ["garbage", "deleted"])
    func damagedOrDeletedIndexIsRebuiltFromTheValueFiles(damage: String) throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
                try cache.store(pattern(100_000, seed: 1), forKey: "k")
                try cache.store(pattern(100, seed: 2), forKey: "small")
                cache.close()
            }
            let index = dir.appendingPathComponent("index.sqlite")
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index.path + suffix) }
            if damage == "garbage" {
                try pattern(8192, seed: 3).write(to: index)
            } else {
                try FileManager.default.removeItem(at: index)
            }
            let events = LockedValue([String]())
            let cache = try DiskCache(
                directory: dir, configuration: .init(onEvent: { event in events.withLock { $0.append("\(event)") } }))
            cache.waitForBackgroundWork()
            // The file-backed entry comes back; the small unpinned one lived only in the index.
            #expect(try cache.allKeys == ["k"])
            #expect(try cache.data(forKey: "k") == pattern(100_000, seed: 1))
            #expect(events.withLock { $0 }.first == "index rebuilt from the value files: 1 entries recovered, 0 lost")
            try cache.store(Data("again".utf8), forKey: "k")
            #expect(try cache.data(forKey: "k") == Data("again".utf8))
        }
    }
}
