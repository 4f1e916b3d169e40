import Foundation
import Testing

@testable import Stash

@Suite struct TinyLFUTests {
    @Test(arguments: [EvictionPolicy.tinyLFU, .leastRecentlyUsed])
    func aScanOfOneTimeKeysDoesNotFlushPopularEntries(policy: EvictionPolicy) throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: .bytes(30_000), evictionPolicy: policy))
            for i in 0..<20 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "hot-\(i)") }
            try cache.flush()
            for _ in 0..<3 {
                for i in 0..<20 { _ = try cache.data(forKey: "hot-\(i)") }
            }
            for i in 0..<200 { try cache.store(pattern(1000, seed: 1000 + UInt64(i)), forKey: "scan-\(i)") }
            try cache.flush()
            let survivors = try (0..<20).filter { try cache.containsData(forKey: "hot-\($0)") }.count
            #expect(survivors == (policy == .tinyLFU ? 20 : 0))
        }
    }

    /// Ninety small entries requested three times each, then a large entry requested six times:
    /// worth more bytes than the eight small entries it would displace, but fewer requests.
    @Test(arguments: EvictionPolicy.Objective.allCases)
    func theObjectiveDecidesWhetherALargeEntryMayDisplaceSmallOnes(objective: EvictionPolicy.Objective) throws {
        var simulator = EvictionSimulator(
            policy: .tinyLFU(objective: objective),
            limits: EvictionLimits(sizeLimit: 100_000, countLimit: nil, lowWaterMark: 1.0))
        for _ in 0..<3 {
            for i in 0..<90 { try simulator.request(key: "small-\(i)", size: 1000) }
        }
        // Each round requests the large entry once and then enough new keys to push it out
        // of the window, so that it must compete for a place in the main queue.
        for round in 0..<6 {
            try simulator.request(key: "large", size: 8000)
            for i in 0..<12 { try simulator.request(key: "once-\(round)-\(i)", size: 1000) }
        }
        let isLargeCached = simulator.contains("large")
        let smallSurvivors = (0..<90).filter { simulator.contains("small-\($0)") }.count
        switch objective {
        case .objectMissRatio:
            #expect(!isLargeCached)
            #expect(smallSurvivors == 90)
        case .byteMissRatio:
            #expect(isLargeCached)
            #expect(smallSurvivors >= 80)
        }
    }

    @Test func theSketchSurvivesReopeningAndHitsWriteNothing() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(evictionPolicy: .tinyLFU, accessFlushBatch: 1000)
            do {
                let cache = try DiskCache(directory: dir, configuration: configuration)
                try cache.store(pattern(100, seed: 1), forKey: "k")
                try cache.flush()
                let wal = dir.appendingPathComponent("index.sqlite-wal").path
                let walSize = try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int
                for _ in 0..<10 { _ = try cache.data(forKey: "k") }
                #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int == walSize)
                #expect(try sketchRows(dir) == 0)  // not yet due: written with a later batch or on close
                cache.close()
                #expect(try sketchRows(dir) > 1)
            }
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(try estimate(of: "k", in: cache) == 11)  // the store and 10 hits
        }
    }

    @Test func aMissingSketchIsRebuiltFromTheCachedEntries() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(
                    directory: dir, configuration: .init(evictionPolicy: .leastRecentlyUsed))
                for i in 0..<10 { try cache.store(pattern(100, seed: UInt64(i)), forKey: "k\(i)") }
                try cache.flush()
                cache.close()
            }
            // Switching to TinyLFU starts from the entries already cached, one request each.
            let cache = try DiskCache(directory: dir, configuration: .init(evictionPolicy: .tinyLFU))
            for i in 0..<10 { #expect(try estimate(of: "k\(i)", in: cache) == 1) }
            #expect(try estimate(of: "absent", in: cache) == 0)
            try cache.store(pattern(100, seed: 11), forKey: "k0")
            try cache.flush()
            cache.close()
            let db = try SQLiteConnection(
                path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(1))
            try db.execute("DELETE FROM sketch")
            db.close()
            let reopened = try DiskCache(directory: dir, configuration: .init(evictionPolicy: .tinyLFU))
            #expect(try estimate(of: "k0", in: reopened) == 1)  // rebuilt approximately, not restored
            #expect(try estimate(of: "k9", in: reopened) == 1)
        }
    }

    private func estimate(of key: String, in cache: DiskCache) throws -> Int {
        try cache.index.write { db in try cache.synchronizeSketch(in: db) }
        return cache.sketchSlot.withLock { $0.sketch?.estimate(DiskCache.fingerprint(Array(key.utf8))) ?? -1 }
    }

    private func sketchRows(_ dir: URL) throws -> Int {
        let db = try SQLiteConnection(path: dir.appendingPathComponent("index.sqlite").path, busyTimeout: .seconds(1))
        return try db.first("SELECT COUNT(*) FROM sketch") { $0.int(0) } ?? 0
    }
}
