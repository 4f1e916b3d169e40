import Foundation
import Testing

@testable import Stash

@Suite struct DiskCacheTests {
    @Test(arguments: [0, 1, 32 * 1024 - 1, 32 * 1024, 1 << 20, 32 << 20])
    func roundTripsValuesOfEverySize(size: Int) throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(100))
            let value = pattern(size, seed: UInt64(size))
            try cache.store(value, forKey: "k")
            #expect(try cache.data(forKey: "k") == value)
            #expect(try cache.totalSize.bytes == size)
            #expect(try cache.totalCount == 1)
            let attributes = try #require(try cache.attributes(forKey: "k"))
            #expect(attributes.size == size)
            #expect(attributes.isInline == (size < 32 * 1024))
            let files = valueFilesBelow(dir.appendingPathComponent("data"))
            #expect(files.count == (size < 32 * 1024 ? 0 : 1))
        }
    }

    @Test func overwriteReplacesValueAndRemovesOldFile() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            try cache.store(pattern(100_000, seed: 1), forKey: "k")
            try cache.store(pattern(50_000, seed: 2), forKey: "k")
            #expect(try cache.data(forKey: "k") == pattern(50_000, seed: 2))
            #expect(try cache.totalSize.bytes == 50_000)
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 1)
            try cache.store(Data("small".utf8), forKey: "k")
            #expect(try cache.data(forKey: "k") == Data("small".utf8))
            try cache.flush()  // the replaced file is removed when the replacement commits
            #expect(filesBelow(dir.appendingPathComponent("data")).isEmpty)
            #expect(try cache.totalCount == 1)
        }
    }

    @Test func removeAndClearDeleteEntriesAndFiles() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            try cache.store(pattern(40_000, seed: 1), forKey: "a")
            try cache.store(pattern(10, seed: 2), forKey: "b")
            try cache.store(pattern(40_000, seed: 3), forKey: "c", pinned: true)
            try cache.removeData(forKey: "a")
            #expect(try cache.data(forKey: "a") == nil)
            #expect(try cache.containsData(forKey: "b"))
            #expect(try cache.totalSize.bytes == 40_010)
            try cache.removeAll()
            #expect(try cache.totalCount == 0)
            #expect(try cache.totalSize == .zero)
            #expect(try cache.pinnedCount == 0)
            #expect(try cache.allKeys.isEmpty)
            #expect(filesBelow(dir.appendingPathComponent("data")).isEmpty)
        }
    }

    @Test func emptyKeyIsRejectedWithInvalidKeyAndChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            let error = #expect(throws: StashError.self) { try cache.store(Data([1]), forKey: "") }
            #expect(error?.code == .invalidKey)
            #expect(error?.message.contains("empty") == true)
            #expect(throws: StashError.self) { try cache.data(forKey: "") }
            #expect(try cache.totalCount == 0)
        }
    }

    @Test func hostileKeysRoundTripAndCreateNothingOutsideTheDirectory() throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("cache")
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            let nfc = "caf\u{E9}"
            let nfd = "cafe\u{301}"
            let keys = [
                "../../etc/passwd", "a/b", String(repeating: "x", count: 10_000), "nul\u{0}inside", "\u{0}",
                "emoji 📸🏳️‍🌈", nfc, nfd, "/absolute", ".", "..", " ", "C:\\windows",
            ]
            for (i, key) in keys.enumerated() {
                try cache.store(pattern(i.isMultiple(of: 2) ? 40_000 : 100, seed: UInt64(i)), forKey: key)
            }
            for (i, key) in keys.enumerated() {
                #expect(try cache.data(forKey: key) == pattern(i.isMultiple(of: 2) ? 40_000 : 100, seed: UInt64(i)))
            }
            // Keys are byte-exact: the two normalisations of "café" are two entries.
            #expect(try cache.totalCount == keys.count)
            #expect(Set(try cache.allKeys.map { Array($0.utf8) }) == Set(keys.map { Array($0.utf8) }))
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["cache"])
            let names = filesBelow(dir).filter { !$0.hasPrefix("index.sqlite") }
            #expect(names.allSatisfy { $0.hasPrefix("data/") && $0.split(separator: "/").count == 4 })
        }
    }

    @Test func valueLargerThanLimitIsRefusedAndChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .bytes(100_000))
            try cache.store(pattern(50_000, seed: 1), forKey: "kept")
            let error = #expect(throws: StashError.self) {
                try cache.store(pattern(100_001, seed: 2), forKey: "huge")
            }
            #expect(error?.code == .tooLarge)
            #expect(error?.message.contains("'huge'") == true)
            #expect(try cache.data(forKey: "kept") == pattern(50_000, seed: 1))
            #expect(try cache.totalCount == 1)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
        }
    }

    @Test func invalidConfigurationIsRejected() throws {
        try withTemporaryDirectory { dir in
            for configuration in [
                DiskCache.Configuration(sizeLimit: .zero), DiskCache.Configuration(countLimit: 0),
                DiskCache.Configuration(lowWaterMark: 1.5), DiskCache.Configuration(defaultTimeToLive: .seconds(-1)),
            ] {
                let error = #expect(throws: StashError.self) {
                    try DiskCache(directory: dir, configuration: configuration)
                }
                #expect(error?.code == .invalidArgument)
            }
        }
    }

    @Test func storesFilesByCopyingOrMoving() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir.appendingPathComponent("c"), sizeLimit: .megabytes(10))
            let source = dir.appendingPathComponent("source.bin")
            try pattern(300_000, seed: 7).write(to: source)
            try cache.store(fileAt: source, forKey: "copied")
            #expect(FileManager.default.fileExists(atPath: source.path))
            try cache.store(fileAt: source, forKey: "moved", moving: true)
            #expect(!FileManager.default.fileExists(atPath: source.path))
            #expect(try cache.data(forKey: "copied") == pattern(300_000, seed: 7))
            #expect(try cache.data(forKey: "moved") == pattern(300_000, seed: 7))
            let missing = #expect(throws: StashError.self) {
                try cache.store(fileAt: dir.appendingPathComponent("nope"), forKey: "x")
            }
            #expect(missing?.code == .notFound)
            let verification = try cache.verify()
            #expect(verification.isHealthy)
        }
    }

    @Test func fileURLServesFileValuesAndMaterialisesInlineOnes() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            try cache.store(pattern(100_000, seed: 1), forKey: "big")
            try cache.store(Data("tiny".utf8), forKey: "tiny")
            let big = try #require(try cache.fileURL(forKey: "big"))
            #expect(try Data(contentsOf: big) == pattern(100_000, seed: 1))
            #expect(try cache.fileURL(forKey: "big") == big)
            let tiny = try #require(try cache.fileURL(forKey: "tiny"))
            #expect(try Data(contentsOf: tiny) == Data("tiny".utf8))
            #expect(try cache.fileURL(forKey: "tiny") == tiny)
            #expect(try cache.data(forKey: "tiny") == Data("tiny".utf8))
            #expect(try cache.fileURL(forKey: "absent") == nil)
            try cache.removeData(forKey: "tiny")
            #expect(try cache.fileURL(forKey: "tiny") == nil)  // a staged removal is seen at once
            try cache.flush()  // and the file goes when it commits
            #expect(!FileManager.default.fileExists(atPath: tiny.path))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func generatedKeysSubscriptAndMetadataWork() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            let key = try cache.storeWithGeneratedKey(Data("generated".utf8))
            #expect(try cache.data(forKey: key) == Data("generated".utf8))
            cache["sub"] = Data("scripted".utf8)
            #expect(cache["sub"] == Data("scripted".utf8))
            cache["sub"] = nil
            #expect(cache["sub"] == nil)
            let metadata = DiskCache.Metadata(
                contentType: "image/jpeg", etag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT",
                extra: ["cache-control": "max-age=60"])
            try cache.store(Data("photo".utf8), forKey: "photo", metadata: metadata)
            #expect(try cache.attributes(forKey: "photo")?.metadata == metadata)
            var refreshed = metadata
            refreshed.etag = "\"v2\""
            #expect(try cache.updateMetadata(refreshed, forKey: "photo"))
            #expect(try cache.attributes(forKey: "photo")?.metadata.etag == "\"v2\"")
            #expect(try cache.updateMetadata(refreshed, forKey: "nobody") == false)
        }
    }

    @Test func statisticsCountHitsMissesWritesAndBytes() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            try cache.store(pattern(100, seed: 1), forKey: "a")
            try cache.store(pattern(50_000, seed: 2), forKey: "b")
            _ = try cache.data(forKey: "a")
            _ = try cache.data(forKey: "b")
            _ = try cache.data(forKey: "c")
            let stats = cache.statistics
            #expect(stats.writes == 2)
            #expect(stats.hits == 2)
            #expect(stats.misses == 1)
            #expect(stats.bytesWritten == 50_100)
            #expect(stats.bytesRead == 50_100)
        }
    }

    @Test func asyncVariantsAndEntrySequenceWork() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            for i in 0..<1200 {
                try await cache.store(Data("value \(i)".utf8), forKey: "key-\(i)")
            }
            #expect(try await cache.data(forKey: "key-7") == Data("value 7".utf8))
            // Each once, across batches (in the order of the ids derived from the keys).
            var seen: [String] = []
            for try await entry in cache.entries(batchSize: 100) { seen.append(entry.key) }
            #expect(seen.count == 1200)
            #expect(Set(seen) == Set((0..<1200).map { "key-\($0)" }))
            try await cache.removeData(forKey: "key-7")
            #expect(try await cache.containsData(forKey: "key-7") == false)
        }
    }

    @Test func directoryIsCreatedOwnerOnlyAndRecreatedAfterDeletion() throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("nested/cache")
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            let permissions = try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int
            #expect(permissions == 0o700)
            try cache.store(pattern(10, seed: 1), forKey: "a")
            try cache.flush()
            try FileManager.default.removeItem(at: dir)
            try cache.store(pattern(40_000, seed: 2), forKey: "b")
            try cache.flush()
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("index.sqlite").path))
            #expect(try cache.data(forKey: "b") == pattern(40_000, seed: 2))
            #expect(try cache.data(forKey: "a") == nil)
            #expect(try cache.totalCount == 1)
        }
    }
}

@Suite struct DiskCacheOptionTests {
    @Test func durableModeSyncsAndRoundTrips() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: .init(durability: .durable))
            try cache.store(pattern(100_000, seed: 1), forKey: "file")
            try cache.store(pattern(10, seed: 2), forKey: "inline")
            cache.close()
            let reopened = try DiskCache(directory: dir, configuration: .init(durability: .durable))
            #expect(try reopened.data(forKey: "file") == pattern(100_000, seed: 1))
            #expect(try reopened.data(forKey: "inline") == pattern(10, seed: 2))
            let mode = try reopened.index.read { db in try db.first("PRAGMA synchronous") { $0.int(0) } }
            #expect(mode == 2)  // FULL
        }
    }

    @Test func defaultDirectoryFollowsTheXDGConvention() {
        let url = URL.caches("photos")
        #expect(url.lastPathComponent == "photos")
        #if os(Linux)
            let environment = ProcessInfo.processInfo.environment
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                #expect(
                    url.deletingLastPathComponent().standardizedFileURL.path
                        == URL(fileURLWithPath: xdg).standardizedFileURL.path)
            } else {
                #expect(url.deletingLastPathComponent().path.hasSuffix("/.cache"))
            }
        #endif
    }

    @Test func diskUsageCountsIndexAndValueFiles() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            try cache.store(pattern(200_000, seed: 1), forKey: "a")
            #expect(cache.diskUsage().bytes >= 200_000)
            #expect(try cache.totalSize.bytes == 200_000)
        }
    }
}
