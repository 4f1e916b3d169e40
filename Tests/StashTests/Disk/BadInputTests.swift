import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#endif

/// Every class of bad input, and what it does.
///
/// Each gets a clear `StashError` or a documented behaviour, and nothing already stored is
/// lost. The README's reliability table lists the same rows.
@Suite struct BadInputTests {
    /// A cache holding a pinned and a file-backed entry, which every case checks afterwards.
    private func withSentinels(
        sizeLimit: ByteCount = .megabytes(1), evictionPolicy: EvictionPolicy = .adaptive,
        _ body: (DiskCache, URL) throws -> Void
    ) throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(sizeLimit: sizeLimit, evictionPolicy: evictionPolicy))
            try cache.store(pattern(1000, seed: 1), forKey: "sentinel-pinned", pinned: true)
            try cache.store(pattern(40_000, seed: 2), forKey: "sentinel-file")
            try body(cache, dir)
            #expect(try cache.data(forKey: "sentinel-pinned") == pattern(1000, seed: 1))
            if try cache.containsData(forKey: "sentinel-file") {
                #expect(try cache.data(forKey: "sentinel-file") == pattern(40_000, seed: 2))
            }
        }
    }

    private func code(_ body: () throws -> Void) -> StashError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? StashError)?.code
        }
    }

    @Test func anEmptyKeyIsRefusedEverywhere() throws {
        try withSentinels { (cache, _) throws in
            #expect(code { try cache.store(Data("x".utf8), forKey: "") } == .invalidKey)
            #expect(code { _ = try cache.data(forKey: "") } == .invalidKey)
            #expect(code { try cache.removeData(forKey: "") } == .invalidKey)
            #expect(code { try cache.pin("") } == .invalidKey)
            #expect(try cache.totalCount == 2)
        }
    }

    @Test(arguments: ["1 MB", "NUL", "odd Unicode"])
    func unusualKeysRoundTripByteForByteAndSurviveARebuild(kind: String) throws {
        let keys: [String] =
            switch kind {
            case "1 MB": [String(repeating: "k", count: 1_000_000)]
            case "NUL": ["a\u{0}b", "\u{0}"]
            default: ["caf\u{e9}", "cafe\u{301}", "👩‍👩‍👧‍👦", "\u{202e}evil", "\u{feff}bom", "\u{fffd}"]
            }
        try withSentinels { (cache, _) throws in
            for (i, key) in keys.enumerated() {
                try cache.store(pattern(40_000, seed: UInt64(10 + i)), forKey: key, pinned: true)
            }
            _ = try cache.rebuildIndex()
            for (i, key) in keys.enumerated() {
                #expect(try cache.data(forKey: key) == pattern(40_000, seed: UInt64(10 + i)))
            }
            #expect(Set(try cache.allKeys.map { Array($0.utf8) }).isSuperset(of: keys.map { Array($0.utf8) }))
        }
    }

    @Test func anEmptyValueIsStoredAndReadBackAsEmptyNotAsAMiss() throws {
        try withSentinels { (cache, _) throws in
            try cache.store(Data(), forKey: "empty")
            try cache.store(Data(), forKey: "empty-pinned", pinned: true)
            #expect(try cache.data(forKey: "empty") == Data())
            _ = try cache.rebuildIndex()
            #expect(try cache.data(forKey: "empty-pinned") == Data())
        }
    }

    /// Under a policy without admission (the default may turn away a newcomer that needs the
    /// whole cache, see `AdaptiveAdmissionTests`).
    @Test func aValueExactlyAtTheLimitIsStoredAndOneByteMoreIsRefused() throws {
        try withSentinels(sizeLimit: .bytes(100_000), evictionPolicy: .leastRecentlyUsed) { (cache, _) throws in
            #expect(code { try cache.store(pattern(100_001, seed: 3), forKey: "over") } == .tooLarge)
            #expect(try cache.data(forKey: "sentinel-file") == pattern(40_000, seed: 2))
            try cache.store(pattern(100_000, seed: 4), forKey: "at")
            #expect(try cache.data(forKey: "at") == pattern(100_000, seed: 4))
            try cache.flush()  // eviction happens when the store commits
            // Storing it evicted the other unpinned entry (documented: the limit is hard).
            #expect(try cache.containsData(forKey: "sentinel-file") == false)
        }
    }

    @Test(arguments: [0, -1])
    func zeroAndNegativeLimitsAreRefusedAndCreateNothing(limit: Int) throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("cache")
            #expect(code { _ = try DiskCache(directory: dir, sizeLimit: .bytes(limit)) } == .invalidArgument)
            #expect(
                code { _ = try DiskCache(directory: dir, configuration: .init(countLimit: limit)) } == .invalidArgument)
            #expect(!FileManager.default.fileExists(atPath: dir.path))
        }
    }

    @Test func aDirectoryPathThatIsAFileIsRefusedAndTheFileIsUntouched() throws {
        try withTemporaryDirectory { parent in
            let file = parent.appendingPathComponent("notes.txt")
            try Data("keep me".utf8).write(to: file)
            #expect {
                _ = try DiskCache(directory: file, sizeLimit: .megabytes(1))
            } throws: { error in
                (error as? StashError)?.code == .invalidArgument
                    && (error as? StashError)?.message.contains(file.path) == true
            }
            #expect(try Data(contentsOf: file) == Data("keep me".utf8))
        }
    }

    @Test func aSymlinkedDirectoryIsFollowedAndStaysALink() throws {
        try withTemporaryDirectory { parent in
            let real = parent.appendingPathComponent("real")
            let link = parent.appendingPathComponent("link")
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            do {
                let cache = try DiskCache(directory: link, sizeLimit: .megabytes(1))
                try cache.store(pattern(40_000, seed: 5), forKey: "k", pinned: true)
                cache.close()
            }
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == real.path)
            #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("index.sqlite").path))
            let again = try DiskCache(directory: real, sizeLimit: .megabytes(1))
            #expect(try again.data(forKey: "k") == pattern(40_000, seed: 5))
        }
    }

    // Linux only: mounts a tmpfs with Linux's mount(2) and umount2(2) (macOS has neither the calls
    // nor tmpfs); the injected-fault tests cover the same path everywhere.
    #if os(Linux)
        @Test(.enabled(if: DiskFullTests.canMountTmpfs, "mounting a tmpfs needs root (or CAP_SYS_ADMIN)"))
        func aNewCacheOnAFullDiskGivesADiskFullError() throws {
            try withTemporaryDirectory { parent in
                let mountPoint = parent.appendingPathComponent("full")
                try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
                try #require(mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=256k") == 0)
                defer { umount2(mountPoint.path, Int32(MNT_DETACH)) }
                let filler = open(mountPoint.appendingPathComponent("filler").path, O_WRONLY | O_CREAT, 0o600)
                var chunk = [UInt8](repeating: 1, count: 4096)
                while write(filler, &chunk, chunk.count) > 0 {}
                close(filler)
                let dir = mountPoint.appendingPathComponent("cache")
                #expect {
                    _ = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
                } throws: { error in
                    let error = error as? StashError
                    return error?.code == .diskFull && error?.message.contains(dir.path) == true
                }
            }
        }
    #endif

    @Test func aValueFileReplacedByADirectoryIsAMissAndItsEntryIsDropped() throws {
        try withSentinels { (cache, _) throws in
            try cache.store(pattern(40_000, seed: 6), forKey: "victim")
            let url = try #require(try cache.fileURL(forKey: "victim"))
            try FileManager.default.removeItem(at: url)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            #expect(try cache.data(forKey: "victim") == nil)
            #expect(cache.statistics.damagedEntries == 1)
            #expect(try cache.containsData(forKey: "victim") == false)
        }
    }

    @Test func aTruncatedValueFileIsAMissNeverPartialBytes() throws {
        try withSentinels { (cache, _) throws in
            try cache.store(pattern(40_000, seed: 7), forKey: "victim")
            let url = try #require(try cache.fileURL(forKey: "victim"))
            try pattern(40_000, seed: 7).prefix(10_000).write(to: url)
            #expect(try cache.verify().damagedEntries.map(\.key) == ["victim"])
            #expect(try cache.data(forKey: "victim") == nil)
            #expect(try cache.containsData(forKey: "victim") == false)
        }
    }

    @Test func aTruncatedValueFileIsCountedAsLostByARebuild() throws {
        try withSentinels { (cache, dir) throws in
            try cache.store(pattern(40_000, seed: 7), forKey: "victim")
            let url = try #require(try cache.fileURL(forKey: "victim"))
            try pattern(40_000, seed: 7).prefix(10_000).write(to: url)
            let rebuild = try cache.rebuildIndex()
            #expect(rebuild.lost == 1)
            #expect(try cache.data(forKey: "victim") == nil)
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("data").path))
        }
    }
}
