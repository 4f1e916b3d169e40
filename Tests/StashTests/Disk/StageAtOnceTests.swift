import Foundation
import Testing

@testable import Stash

/// `storeIfStagedAtOnce`: a store that an event loop may make, because it stages the value in
/// memory and neither writes a file nor waits for the writer; anything else is refused with
/// nothing changed, for the caller to store on a thread that may block.
@Suite struct StageAtOnceTests {
    @Test func aValueBelowTheInlineThresholdIsStagedAtOnceAndEveryReadSeesIt() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: WriteBehindTests.staged())
            let other = try DiskCache(directory: dir, configuration: WriteBehindTests.staged())
            let metadata = DiskCache.Metadata(contentType: "text/plain", extra: ["a": "1"])
            #expect(try cache.storeIfStagedAtOnce(pattern(300, seed: 1), forKey: "k", metadata: metadata))
            #expect(try cache.data(forKey: "k") == pattern(300, seed: 1))
            #expect(try cache.attributes(forKey: "k")?.metadata == metadata)
            #expect(cache.statistics.writes == 1)
            #expect(cache.statistics.stagedBytes == 300)
            #expect(try other.data(forKey: "k") == nil)  // staged, not committed
            try cache.flush()
            #expect(try other.data(forKey: "k") == pattern(300, seed: 1))
            #expect(try other.attributes(forKey: "k")?.metadata == metadata)
        }
    }

    @Test func aValueThatNeedsAFileIsRefusedUnlessTheWriterWritesFiles() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: WriteBehindTests.staged())
            #expect(try !cache.storeIfStagedAtOnce(pattern(40_000, seed: 1), forKey: "file"))
            #expect(try cache.data(forKey: "file") == nil)
            #expect(cache.statistics.writes == 0)
            #expect(cache.statistics.stagedBytes == 0)
        }
        try withTemporaryDirectory { dir in
            var configuration = WriteBehindTests.staged()
            configuration.writesValueFilesInBackground = true
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(try cache.storeIfStagedAtOnce(pattern(40_000, seed: 1), forKey: "file"))
            try cache.flush()
            #expect(try cache.attributes(forKey: "file")?.isInline == false)
            #expect(try cache.data(forKey: "file") == pattern(40_000, seed: 1))
        }
    }

    @Test func aStoreIntoAFullStagingAreaIsRefusedWithoutWaitingForTheWriter() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: WriteBehindTests.staged(stagingLimit: .bytes(10_000)))
            #expect(try cache.storeIfStagedAtOnce(pattern(6000, seed: 1), forKey: "a"))
            // The writer never commits on its own here: a store that waited would commit.
            #expect(try !cache.storeIfStagedAtOnce(pattern(6000, seed: 2), forKey: "b"))
            #expect(cache.statistics.commits == 0)
            #expect(cache.statistics.stagedBytes == 6000)
            #expect(try cache.data(forKey: "b") == nil)
            try cache.store(pattern(6000, seed: 2), forKey: "b")  // the caller's fallback
            #expect(try cache.data(forKey: "a") == pattern(6000, seed: 1))
            #expect(try cache.data(forKey: "b") == pattern(6000, seed: 2))
        }
    }

    @Test func immediateAndDurableCachesAreRefused() throws {
        try withTemporaryDirectory { dir in
            var configuration = WriteBehindTests.staged()
            configuration.writeMode = .immediate
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(try !cache.storeIfStagedAtOnce(pattern(300, seed: 1), forKey: "k"))
            #expect(try cache.data(forKey: "k") == nil)
        }
        try withTemporaryDirectory { dir in
            var configuration = WriteBehindTests.staged()
            configuration.durability = .durable
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(try !cache.storeIfStagedAtOnce(pattern(300, seed: 1), forKey: "k"))
            #expect(try cache.data(forKey: "k") == nil)
        }
    }

    @Test func anEmptyKeyOrAValueOverTheSizeLimitThrowsAndStagesNothing() throws {
        try withTemporaryDirectory { dir in
            let configuration = WriteBehindTests.staged(sizeLimit: .bytes(1000))
            let cache = try DiskCache(directory: dir, configuration: configuration)
            let empty = #expect(throws: StashError.self) {
                try cache.storeIfStagedAtOnce(pattern(10, seed: 1), forKey: "")
            }
            #expect(empty?.code == .invalidKey)
            let large = #expect(throws: StashError.self) {
                try cache.storeIfStagedAtOnce(pattern(2000, seed: 1), forKey: "large")
            }
            #expect(large?.code == .tooLarge)
            #expect(cache.statistics.stagedBytes == 0)
            #expect(cache.statistics.writes == 0)
        }
    }
}
