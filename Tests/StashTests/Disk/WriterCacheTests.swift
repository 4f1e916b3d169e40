import Foundation
import Testing

@testable import Stash

/// How the writer connection reads the index: a page cache that grows with the index when it
/// commits in batches, and pread(2) with a small cache when it commits every write.
@Suite struct WriterCacheTests {
    /// `(cache_size, mmap_size)` of `cache`'s writer connection.
    static func writerSettings(of cache: DiskCache) throws -> (cacheSize: Int, mmapSize: Int) {
        try cache.index.write { db in
            let cacheSize = try db.first("PRAGMA cache_size") { $0.int(0) } ?? 0
            let mmapSize = try db.first("PRAGMA mmap_size") { $0.int(0) } ?? 0
            return (cacheSize, mmapSize)
        }
    }

    @Test func theWriterCacheIsAFixedShareOfTheIndexWithinBounds() {
        let mib = 1024 * 1024
        func kib(_ bytes: Int) -> Int { DiskIndex.writerCacheKiB(forDatabaseBytes: bytes) }
        // Small indexes keep 2 MiB, where a larger cache cost more per commit than it saved.
        #expect(kib(0) == 2048)
        #expect(kib(50 * mib) == 2048)
        #expect(kib(255 * mib) == 2048)
        // A 64th of the index, in 2 MiB steps.
        #expect(kib(256 * mib) == 4096)
        #expect(kib(700 * mib) == 10240)
        // At most 16 MiB, however large the index.
        #expect(kib(1300 * mib) == 16384)
        #expect(kib(100_000 * mib) == 16384)
    }

    @Test func aWriteBehindWriterReadsThroughTheMapWithTheCacheItsIndexSizeGives() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(50)))
            for i in 0..<20 { try cache.store(pattern(900, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.flush()
            let settings = try Self.writerSettings(of: cache)
            let bytes = POSIXFile.size(cache.index.databasePath)?.logical ?? 0
            #expect(settings.cacheSize == -DiskIndex.writerCacheKiB(forDatabaseBytes: bytes))
            #expect(settings.mmapSize > 0)
            #expect(try cache.data(forKey: "k7") == pattern(900, seed: 7))
        }
    }

    @Test func theWriterCacheFollowsTheIndexAsItGrowsAndShrinks() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(50)))
            let size = LockedValue(700 * 1024 * 1024)
            cache.index.databaseBytesForWriterCache = { size.withLock { $0 } }
            #expect(try Self.writerSettings(of: cache).cacheSize == -2048)  // fitted when it opened
            // Checked every `cacheSizeCheckInterval` write transactions.
            for _ in 0..<DiskIndex.cacheSizeCheckInterval { try cache.index.write { _ in } }
            #expect(try Self.writerSettings(of: cache).cacheSize == -10240)
            size.withLock { $0 = 10 * 1024 * 1024 }
            for _ in 0..<DiskIndex.cacheSizeCheckInterval { try cache.index.write { _ in } }
            #expect(try Self.writerSettings(of: cache).cacheSize == -2048)
            try cache.store(pattern(900, seed: 1), forKey: "k")
            try cache.flush()
            #expect(try cache.data(forKey: "k") == pattern(900, seed: 1))
        }
    }

    @Test(arguments: [DiskCache.WriteMode.immediate, .writeBehind])
    func aWriterThatCommitsEveryWriteReadsWithPread(_ mode: DiskCache.WriteMode) throws {
        try withTemporaryDirectory { dir in
            var configuration = DiskCache.Configuration(sizeLimit: .megabytes(50))
            configuration.writeMode = mode
            // Under `.durable` every store commits (and syncs) before it returns, in either mode.
            configuration.durability = mode == .writeBehind ? .durable : .fast
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for i in 0..<20 { try cache.store(pattern(900, seed: UInt64(i)), forKey: "k\(i)") }
            let settings = try Self.writerSettings(of: cache)
            #expect(settings.cacheSize == -2048)
            #expect(settings.mmapSize == 0)
            // It walks its cache at any commit: 2 MiB however large the index grows.
            cache.index.databaseBytesForWriterCache = { 1300 * 1024 * 1024 }
            for _ in 0..<DiskIndex.cacheSizeCheckInterval { try cache.index.write { _ in } }
            #expect(try Self.writerSettings(of: cache).cacheSize == -2048)
            // Reads go through the readers, which keep their maps; the stores are all there.
            for i in 0..<20 { #expect(try cache.data(forKey: "k\(i)") == pattern(900, seed: UInt64(i))) }
            cache.close()
            let reopened = try DiskCache(directory: dir, configuration: configuration)
            #expect(try reopened.data(forKey: "k19") == pattern(900, seed: 19))
            #expect(try Self.writerSettings(of: reopened).mmapSize == 0)
        }
    }
}
