import Foundation
import Testing

@testable import Stash

/// `DiskCache.mayHoldKey(_:)` with `Configuration.keepsKeyFilter`: never `false` for a key the
/// cache holds or was given, and `false` for nearly every key it never had.
struct KeyFilterTests {
    static func filtered() -> DiskCache.Configuration {
        var configuration = DiskCache.Configuration(sizeLimit: .megabytes(200), reclaimsOrphansOnOpen: false)
        configuration.keepsKeyFilter = true
        return configuration
    }

    /// Opens the cache and waits for its filter's first build.
    static func open(_ directory: URL) throws -> DiskCache {
        let cache = try DiskCache(directory: directory, configuration: filtered())
        cache.backgroundWork.wait()
        return cache
    }

    static func absentShare(_ cache: DiskCache, prefix: String, count: Int) -> Double {
        Double((0..<count).filter { !cache.mayHoldKey("\(prefix)\($0)") }.count) / Double(count)
    }

    @Test func keysInTheIndexAndKeysStoredSinceAreNeverAnsweredAbsent() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try Self.open(dir)
                for i in 0..<3000 { try cache.store(pattern(40, seed: UInt64(i)), forKey: "old/\(i)") }
                try cache.flush()
            }
            // Reopened: the filter is built from the index.
            let cache = try Self.open(dir)
            #expect((0..<3000).allSatisfy { cache.mayHoldKey("old/\($0)") })
            // Staged, not committed: known as soon as the store returns.
            for i in 0..<500 { try cache.store(pattern(40, seed: UInt64(i)), forKey: "new/\(i)") }
            #expect((0..<500).allSatisfy { cache.mayHoldKey("new/\($0)") })
            // Keys never stored: nearly all answered absent (a false positive about 1 time in 100).
            #expect(Self.absentShare(cache, prefix: "never/", count: 10_000) > 0.97)
            // A removed key may still be answered present: the filter forgets nothing until rebuilt.
            try cache.removeData(forKey: "old/0")
            #expect(try cache.data(forKey: "old/0") == nil)
        }
    }

    /// The filter is rebuilt as it fills (sized for the keys it then holds), so that it keeps
    /// answering absent for keys never stored, and every stored key present throughout.
    @Test func aFilterThatFillsUpIsRebuiltLarger() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            // Built for an empty index: 65,536 bits, rebuilt after 6,553 keys.
            for i in 0..<30_000 {
                try cache.store(pattern(16, seed: UInt64(i)), forKey: "k/\(i)")
                if i % 5_000 == 4_999 {
                    #expect((0...i).allSatisfy { cache.mayHoldKey("k/\($0)") })
                }
            }
            try cache.flush()
            cache.backgroundWork.wait()
            #expect((0..<30_000).allSatisfy { cache.mayHoldKey("k/\($0)") })
            #expect(Self.absentShare(cache, prefix: "never/", count: 10_000) > 0.97)
        }
    }

    /// Another cache object on the directory (as another process) stores keys that this one's
    /// filter does not know; this one's next commit reads the rows appended since its last look.
    @Test func keysAnotherObjectStoredAreKnownAfterTheNextCommit() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            let other = try Self.open(dir)
            for i in 0..<200 { try other.store(pattern(40, seed: UInt64(i)), forKey: "other/\(i)") }
            try other.flush()
            // Unknown to `cache` yet: most are answered absent (a read would have found them).
            #expect(Self.absentShare(cache, prefix: "other/", count: 200) > 0.9)
            try cache.store(pattern(40, seed: 1), forKey: "mine")
            try cache.flush()
            #expect((0..<200).allSatisfy { cache.mayHoldKey("other/\($0)") })
            #expect(try cache.data(forKey: "other/7") == pattern(40, seed: 7))
        }
    }

    @Test func aRebuiltIndexKeepsEveryKeyKnown() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            for i in 0..<300 { try cache.store(pattern(50_000 + i, seed: UInt64(i)), forKey: "file/\(i)") }
            try cache.flush()
            _ = try cache.rebuildIndex()
            cache.backgroundWork.wait()
            #expect((0..<300).allSatisfy { cache.mayHoldKey("file/\($0)") })
            try cache.store(pattern(40, seed: 1), forKey: "after")
            #expect(cache.mayHoldKey("after"))
            #expect(Self.absentShare(cache, prefix: "never/", count: 10_000) > 0.97)
        }
    }

    @Test func keysPublishedAtOnceAreKnownWhenTheStoreReturns() throws {
        try withTemporaryDirectory { dir in
            var configuration = Self.filtered()
            configuration.writeMode = .immediate
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for i in 0..<8_000 { try cache.store(pattern(20, seed: UInt64(i)), forKey: "now/\(i)") }
            cache.backgroundWork.wait()
            #expect((0..<8_000).allSatisfy { cache.mayHoldKey("now/\($0)") })
            #expect(Self.absentShare(cache, prefix: "never/", count: 10_000) > 0.97)
        }
    }

    @Test func withoutTheFilterEveryKeyMayBeHeld() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(10)))
            #expect(Self.absentShare(cache, prefix: "never/", count: 1_000) == 0)
        }
    }
}
