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
    /// An 8-byte seed followed by bytes generated from it (as the test worker writes them).
    static func value(_ count: Int, seed: UInt64) -> Data {
        var data = Data(count: max(count, 8))
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.storeBytes(of: seed.littleEndian, as: UInt64.self)
            var state = seed | 1
            for i in 8..<buffer.count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    static func seed(of data: Data) -> UInt64? {
        guard data.count >= 8 else { return nil }
        let seed = data.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        return value(data.count, seed: seed) == data ? seed : nil
    }

    /// Checks one read; returns whether the value was a file.
    ///
    /// The bytes must be intact, their seed the one the metadata was stored with, and the
    /// attributes' size their length.
    static func check(_ entry: DiskCache.Entry) throws -> Bool {
        let bytes = try entry.data()
        let seed = seed(of: bytes)
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
            try cache.store(Self.value(100, seed: 7), forKey: "small", metadata: .init(etag: "7"))
            try cache.store(Self.value(50_000, seed: 8), forKey: "large", metadata: .init(etag: "8"))
            let small = try #require(try cache.entry(forKey: "small"))
            #expect(small.inlineBytes == Self.value(100, seed: 7))
            #expect(try !Self.check(small))
            let large = try #require(try cache.entry(forKey: "large"))
            #expect(large.inlineBytes == nil)
            #expect(try Self.check(large))
            #expect(try large.bytes(in: 8..<16) == Self.value(50_000, seed: 8)[8..<16])
            #expect(try cache.entry(forKey: "absent") == nil)
            #expect(throws: StashError.self) { try cache.entry(forKey: "") }
        }
    }

    /// The open file stays the entry's: an overwrite after the read unlinks it but does not change it.
    @Test func anOpenFileOutlivesAnOverwrite() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            try cache.store(Self.value(40_000, seed: 1), forKey: "k", metadata: .init(etag: "1"))
            let entry = try #require(try cache.entry(forKey: "k"))
            try cache.store(Self.value(60_000, seed: 2), forKey: "k", metadata: .init(etag: "2"))
            #expect(try Self.check(entry))
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
            #expect(try cache.entry(forKey: "k")?.attributes.metadata.etag == "2")
        }
    }

    @Test func seesStagedValuesUnderWriteBehind() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), maxWriteDelay: .seconds(60)))
            try cache.store(Self.value(300, seed: 3), forKey: "k", metadata: .init(etag: "3"))
            #expect(try !Self.check(#require(try cache.entry(forKey: "k"))))
            try cache.store(Self.value(30_000, seed: 4), forKey: "k", metadata: .init(etag: "4"))
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
            try cache.flush()
            #expect(try Self.check(#require(try cache.entry(forKey: "k"))))
        }
    }

    /// Another thread overwrites one key with inline and file values as fast as it can; every read
    /// returns a matching head and body.
    @Test func concurrentReplacementFromAnotherThreadNeverMixesHeadAndBody() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(
                directory: dir, configuration: .init(inlineThreshold: .bytes(8192), writeMode: .immediate))
            try cache.store(Self.value(10, seed: 99), forKey: "one", metadata: .init(etag: "99"))
            let stop = LockedValue(false)
            let writer = Thread {
                var generator = SplitMix64(seed: 42)
                var step = 0
                while !stop.withLock({ $0 }) {
                    let seed = generator.next()
                    let size = step % 2 == 0 ? Int(seed % 8000) + 8 : Int(seed % 190_000) + 9000
                    try? cache.store(Self.value(size, seed: seed), forKey: "one", metadata: .init(etag: "\(seed)"))
                    step += 1
                }
            }
            writer.start()
            defer { stop.withLock { $0 = true } }
            var files = 0
            var inline = 0
            // At least 3000 reads, and on until both kinds were seen (the writer may start late).
            let deadline = ContinuousClock.now + .seconds(60)
            var reads = 0
            while reads < 3000 || (files == 0 || inline == 0) && ContinuousClock.now < deadline {
                reads += 1
                guard let entry = try cache.entry(forKey: "one") else { continue }
                if try Self.check(entry) { files += 1 } else { inline += 1 }
            }
            #expect(files > 0 && inline > 0, "files \(files), inline \(inline)")
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
            var files = 0
            var inline = 0
            // At least 3000 reads, and on until both kinds were seen (the writer may start late).
            let deadline = ContinuousClock.now + .seconds(60)
            var reads = 0
            while reads < 3000 || (files == 0 || inline == 0) && ContinuousClock.now < deadline {
                reads += 1
                guard let entry = try cache.entry(forKey: "one") else { continue }
                if try Self.check(entry) { files += 1 } else { inline += 1 }
            }
            #expect(files > 0 && inline > 0, "files \(files), inline \(inline)")
        }
    }
}
