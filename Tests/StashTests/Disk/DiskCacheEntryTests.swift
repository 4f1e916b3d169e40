import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `DiskCache.entry(forKey:)`: attributes and bytes (or the open file) from one snapshot.
@Suite struct DiskCacheEntryTests {
    /// Checks one read; returns whether the value was a file.
    ///
    /// The bytes must be intact, their seed the one the metadata was stored with, and the
    /// attributes' size their length.
    static func check(_ entry: DiskCache.Entry) throws -> Bool {
        let bytes = try entry.data()
        let seed = SeededValue.seed(of: bytes)
        #expect(seed != nil, "torn or foreign bytes (\(bytes.count))")
        #expect(seed.map(String.init) == entry.attributes.metadata.etag, "a head with another value's body")
        #expect(entry.attributes.size == bytes.count)
        #expect((entry.fileDescriptor != nil) == !entry.attributes.isInline)
        return entry.fileDescriptor != nil
    }

    @Test func returnsTheAttributesWithTheInlineBytesOrTheOpenFile() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            try cache.store(SeededValue.make(100, seed: 7), forKey: "small", metadata: .init(etag: "7"))
            try cache.store(SeededValue.make(50_000, seed: 8), forKey: "large", metadata: .init(etag: "8"))
            let small = try #require(try cache.entry(forKey: "small"))
            #expect(small.inlineBytes == SeededValue.make(100, seed: 7))
            #expect(try !Self.check(small))
            let large = try #require(try cache.entry(forKey: "large"))
            #expect(large.inlineBytes == nil)
            #expect(try Self.check(large))
            #expect(try large.bytes(in: 8..<16) == SeededValue.make(50_000, seed: 8)[8..<16])
            #expect(try cache.entry(forKey: "absent") == nil)
            #expect(throws: StashError.self) { try cache.entry(forKey: "") }
        }
    }

    /// The open file stays the entry's: an overwrite after the read unlinks it but does not change it.
    @Test func anOpenFileOutlivesAnOverwrite() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            try cache.store(SeededValue.make(40_000, seed: 1), forKey: "k", metadata: .init(etag: "1"))
            let entry = try #require(try cache.entry(forKey: "k"))
            try cache.store(SeededValue.make(60_000, seed: 2), forKey: "k", metadata: .init(etag: "2"))
            #expect(try Self.check(entry))
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
            #expect(try cache.entry(forKey: "k")?.attributes.metadata.etag == "2")
        }
    }

    /// `decodingExtra: false` returns a committed entry's `extra` as the text the index stores,
    /// read from the same row as the value: a new value stored under the key comes with its own
    /// text, and a staged value comes decoded instead.
    @Test func anUndecodedReadReturnsTheStoredExtraTextOfItsOwnRow() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            for (seed, size): (UInt64, Int) in [(1, 100), (2, 100), (3, 40_000), (4, 40_000)] {
                let extra = ["seed": String(seed), "note": "quote \" and \\ kept"]
                try cache.store(
                    SeededValue.make(size, seed: seed), forKey: "k", metadata: .init(etag: String(seed), extra: extra))
                let entry = try #require(try cache.entry(forKey: "k", decodingExtra: false))
                #expect(entry.hasStoredExtra)
                #expect(entry.attributes.metadata == DiskCache.Metadata())
                #expect(entry.storedExtra.map(DiskCache.decodeExtra) == extra)
                #expect(try SeededValue.seed(of: entry.data()) == seed, "the text and the bytes of one row")
                #expect(entry.attributes.size == size)
                let decoded = try #require(try cache.entry(forKey: "k"))
                #expect(!decoded.hasStoredExtra && decoded.storedExtra == nil)
                #expect(decoded.attributes.metadata.extra == extra)
            }
            #expect(try cache.entry(forKey: "absent", decodingExtra: false) == nil)

            let staging = try DiskCache(
                directory: dir.appendingPathComponent("staged"),
                configuration: .init(inlineThreshold: .bytes(8192), maxWriteDelay: .seconds(60)))
            try staging.store(SeededValue.make(300, seed: 5), forKey: "k", metadata: .init(extra: ["seed": "5"]))
            let staged = try #require(try staging.entry(forKey: "k", decodingExtra: false))
            #expect(!staged.hasStoredExtra)
            #expect(staged.attributes.metadata.extra == ["seed": "5"])
            try staging.flush()
            let committed = try #require(try staging.entry(forKey: "k", decodingExtra: false))
            #expect(committed.hasStoredExtra)
            #expect(committed.storedExtra.map(DiskCache.decodeExtra) == ["seed": "5"])
        }
    }

    @Test func seesStagedValuesUnderWriteBehind() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), maxWriteDelay: .seconds(60)))
            try cache.store(SeededValue.make(300, seed: 3), forKey: "k", metadata: .init(etag: "3"))
            #expect(try !Self.check(#require(try cache.entry(forKey: "k"))))
            try cache.store(SeededValue.make(30_000, seed: 4), forKey: "k", metadata: .init(etag: "4"))
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
            try cache.flush()
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
        }
    }

    /// Reads the key `one` at least 3000 times, and on until both an inline value and a file were
    /// seen (the writer may start late), checking every read.
    static func readWhileReplaced(_ cache: DiskCache) throws {
        var files = 0
        var inline = 0
        let deadline = ContinuousClock.now + .seconds(60)
        var reads = 0
        while reads < 3000 || (files == 0 || inline == 0) && ContinuousClock.now < deadline {
            reads += 1
            guard let entry = try cache.entry(forKey: "one") else { continue }
            if try check(entry) { files += 1 } else { inline += 1 }
        }
        #expect(files > 0 && inline > 0, "files \(files), inline \(inline)")
    }

    /// Another thread overwrites one key with inline and file values as fast as it can; every read
    /// returns a matching head and body.
    @Test func concurrentReplacementFromAnotherThreadNeverMixesHeadAndBody() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            try cache.store(SeededValue.make(10, seed: 99), forKey: "one", metadata: .init(etag: "99"))
            let stop = LockedValue(false)
            let writer = Thread {
                var generator = SplitMix64(seed: 42)
                var step = 0
                while !stop.withLock({ $0 }) {
                    let seed = generator.next()
                    let size = step % 2 == 0 ? Int(seed % 8000) + 8 : Int(seed % 190_000) + 9000
                    try? cache.store(
                        SeededValue.make(size, seed: seed), forKey: "one", metadata: .init(etag: "\(seed)"))
                    step += 1
                }
            }
            writer.start()
            defer { stop.withLock { $0 = true } }
            try Self.readWhileReplaced(cache)
        }
    }

    /// The same against another process writing through its own `DiskCache`.
    @Test func concurrentReplacementFromAnotherProcessNeverMixesHeadAndBody() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    sizeLimit: .bytes(50_000_000), inlineThreshold: .bytes(8192), writeMode: .immediate))
            let (process, output) = try Worker.start(["replace-loop", dir.path, "5"])
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            #expect(Worker.waitForLines(output, prefix: "progress", count: 2))
            try Self.readWhileReplaced(cache)
        }
    }
}
