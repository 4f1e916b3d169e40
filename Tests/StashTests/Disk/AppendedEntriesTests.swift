import Foundation
import Testing

@testable import Stash

/// Schema 5 appends every entry's row and its state's, a replacement included, and finds it
/// through the index of ids: the replaced row goes with its state and everything the triggers
/// count (a `REPLACE` would skip them), and an entry whose id another key holds takes a
/// negative id of its own.
@Suite struct AppendedEntriesTests {
    /// The first column of every row `sql` returns, as text.
    static func rows(_ cache: DiskCache, _ sql: String) throws -> [String] {
        try DiskIndexHotPathTests.rows(of: cache, sql) { $0.text(0) ?? "NULL" }
    }

    @Test func aReplacedValueIsANewLastRowUnderTheSameIdAndItsOldRowIsGoneWithItsTotals() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskIndexHotPathTests.open(
                dir, .init(sizeLimit: .megabytes(50), inlineThreshold: .kibibytes(4)))
            defer { cache.close() }
            try cache.store(pattern(1000, seed: 1), forKey: "a")
            try cache.store(pattern(2000, seed: 2), forKey: "b")
            let id = DiskCache.entryID(forKey: Data("a".utf8))
            // Inline to inline, inline to a file, a file to pinned, pinned back to inline.
            for (size, pinned, seed) in [(1500, false, 3), (9000, false, 4), (9500, true, 5), (700, false, 6)] {
                try cache.store(pattern(size, seed: UInt64(seed)), forKey: "a", pinned: pinned)
                #expect(try cache.data(forKey: "a") == pattern(size, seed: UInt64(seed)))
                #expect(
                    try Self.rows(cache, "SELECT CAST(key AS TEXT) || ' ' || id FROM entries ORDER BY seq") == [
                        "b \(DiskCache.entryID(forKey: Data("b".utf8)))", "a \(id)",
                    ])
                #expect(try cache.totalSize.bytes == 2000 + size)
                #expect(try cache.totalCount == 2)
                // One state per entry, under its row's number, with its size and pin.
                #expect(
                    try Self.rows(
                        cache,
                        """
                        SELECT count(*) FROM entries e JOIN states s ON s.seq = e.seq
                        WHERE s.size = e.size AND s.pinned = e.pinned
                        """) == ["2"])
                #expect(try Self.rows(cache, "SELECT count(*) FROM states") == ["2"])
                #expect(try cache.pinnedSize.bytes == (pinned ? size : 0))
                #expect(try cache.pinnedCount == (pinned ? 1 : 0))
                #expect(try cache.verify().isHealthy)
                try cache.store(pattern(2000, seed: 2), forKey: "b")  // b goes last again
                #expect(try Self.rows(cache, "SELECT CAST(key AS TEXT) FROM entries ORDER BY seq") == ["a", "b"])
            }
            // The file of the value a replacement dropped is gone.
            #expect(try Self.rows(cache, "SELECT count(*) FROM entries WHERE file IS NOT NULL") == ["0"])
            #expect(try cache.reclaimOrphans().count == 0)
        }
    }

    /// Every policy, a seeded mix of stores (new and replacing, inline and in files, pinned
    /// and with a time-to-live), removals, pins, clock jumps and trims, under a limit that
    /// evicts: after every step the totals equal what the rows add up to, every key has at
    /// most one row, and a read returns the last value stored under its key or nothing.
    @Test(arguments: EvictionPolicy.all)
    func theTotalsStayExactAcrossReplacementsEvictionsRemovalsPinsExpiryAndTrims(policy: EvictionPolicy) throws {
        try withTemporaryDirectory { dir in
            let now = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    sizeLimit: .kibibytes(64), inlineThreshold: .kibibytes(4), evictionPolicy: policy,
                    clock: { now.withLock { $0 } }))
            defer { cache.close() }
            var random = SplitMix64(seed: 30)
            var last: [String: Data] = [:]
            for step in 0..<400 {
                let key = "k\(Int.random(in: 0..<24, using: &random))"
                switch Int.random(in: 0..<20, using: &random) {
                case 0..<11:
                    let size = Bool.random(using: &random) ? Int.random(in: 1..<4000, using: &random) : 6000
                    let value = pattern(size, seed: UInt64(step))
                    let ttl: Duration? = Int.random(in: 0..<4, using: &random) == 0 ? .seconds(5) : nil
                    let pinned: Bool? = Int.random(in: 0..<10, using: &random) == 0 ? true : nil
                    try cache.store(value, forKey: key, timeToLive: ttl, pinned: pinned)
                    last[key] = value
                case 11..<14: try cache.removeData(forKey: key)
                case 14: _ = try cache.pin(key)
                case 15: _ = try cache.unpin(key)
                case 16: now.withLock { $0 += 3 }
                case 17: try cache.trim(toSize: .kibibytes(Double(Int.random(in: 8..<48, using: &random))))
                default: _ = try cache.data(forKey: key)
                }
                try cache.flush()
                let report = try cache.verify()
                #expect(!report.totalsMismatch, "step \(step)")
                #expect(report.isHealthy, "step \(step)")
                #expect(try Self.rows(cache, "SELECT key FROM entries GROUP BY key HAVING count(*) > 1") == [])
                #expect(
                    try Self.rows(cache, "SELECT count(*) FROM states WHERE seq NOT IN (SELECT seq FROM entries)") == [
                        "0"
                    ])
                if let stored = try cache.data(forKey: key) { #expect(stored == last[key], "step \(step) \(key)") }
            }
            // The pinned values outlast everything but their removal; the rest is within the limit.
            #expect(try cache.totalSize.bytes - cache.pinnedSize.bytes <= ByteCount.kibibytes(64).bytes)
        }
    }

    @Test func anEntryWhoseIdAnotherKeyHoldsTakesANegativeIdAndIsFoundReplacedAndRemoved() async throws {
        try await withTemporaryDirectory { dir in
            var cache = try DiskIndexHotPathTests.open(dir)
            try await cache.store(pattern(300, seed: 1), forKey: "holder")
            cache.close()
            // "holder" sits at the id of "victim", as a hash collision would have put it.
            let victimID = DiskCache.entryID(forKey: Data("victim".utf8))
            try DiskIndexHotPathTests.rewrite(
                dir,
                """
                UPDATE entries SET id = \(victimID), displaced = 1 WHERE key = CAST('holder' AS BLOB);
                UPDATE totals SET displaced = 1;
                """)
            cache = try DiskIndexHotPathTests.open(dir)
            defer { cache.close() }
            try await cache.store(pattern(400, seed: 2), forKey: "victim")
            let first = try Self.rows(
                cache, "SELECT id || ' ' || seq || ' ' || displaced FROM entries WHERE key = CAST('victim' AS BLOB)")
            #expect(first.count == 1)
            let parts = first[0].split(separator: " ").map { Int64($0)! }
            #expect(parts[0] == -1 - parts[1] && parts[2] == 1)
            #expect(try await cache.data(forKey: "victim") == pattern(400, seed: 2))
            #expect(try await cache.data(forKey: "holder") == pattern(300, seed: 1))
            // A replacement keeps the id; a second displaced entry takes another.
            try await cache.store(pattern(500, seed: 3), forKey: "victim")
            #expect(
                try Self.rows(cache, "SELECT id FROM entries WHERE key = CAST('victim' AS BLOB)") == ["\(parts[0])"])
            try await cache.removeData(forKey: "holder")
            try await cache.store(pattern(600, seed: 4), forKey: "holder")  // its own id is free now
            #expect(
                try Self.rows(cache, "SELECT id || ' ' || displaced FROM entries WHERE key = CAST('holder' AS BLOB)")
                    == ["\(DiskCache.entryID(forKey: Data("holder".utf8))) 0"])
            #expect(try await cache.data(forKey: "victim") == pattern(500, seed: 3))
            #expect(try await cache.containsData(forKey: "victim"))
            #expect(try await cache.attributes(forKey: "victim")?.size == 500)
            var seen: [String] = []
            for try await attributes in cache.entries() { seen.append(attributes.key) }
            #expect(seen.sorted() == ["holder", "victim"])
            try await cache.removeData(forKey: "victim")
            #expect(try await cache.data(forKey: "victim") == nil)
            #expect(try cache.totalCount == 1)
            #expect(try await cache.verify().isHealthy)
        }
    }
}
