import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory listing behind the orphan reclaim, the index rebuild and `diskUsage()` reads each
/// name inside its `readdir` record, which is `d_reclen` bytes long, never a whole `dirent`.
@Suite struct DirectoryListingTests {
    /// Names of short records, the last one ending where a `PROT_NONE` page begins.
    ///
    /// A copy of `dirent.d_name` (256 bytes) out of such a record reads the next page and dies
    /// with SIGSEGV. Runs in a child process, so that the crash fails this test instead of the
    /// whole run.
    @Test func aNameIsReadInsideItsRecordWhenTheRecordEndsAtAnUnmappedPage() async {
        await #expect(processExitsWith: .success) {
            let page = Int(sysconf(Int32(_SC_PAGESIZE)))
            guard let base = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                base != UnsafeMutableRawPointer(bitPattern: -1), mprotect(base + page, page, PROT_NONE) == 0
            else { exit(3) }
            let names = ["filler-record", "0123456789abcdef0123456789abcdef", "z"]
            // The records as readdir lays them out: 8-byte aligned, each `d_reclen` long, the
            // last one ending exactly where the guard page starts.
            func recordLength(_ name: String) -> Int {
                (MemoryLayout<dirent>.offset(of: \dirent.d_name)! + name.utf8.count + 1 + 7) & ~7
            }
            let tail = recordLength(names[1]) + recordLength(names[2])
            let lengths = [page - tail, recordLength(names[1]), recordLength(names[2])]
            var offsets: [Int] = []
            var offset = 0
            for (name, length) in zip(names, lengths) {
                let record = base + offset
                memset(record, 0, length)
                record.storeBytes(
                    of: UInt16(length), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!,
                    as: UInt16.self)
                record.storeBytes(
                    of: UInt8(DT_REG), toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_type)!, as: UInt8.self)
                let nameStart = record + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
                _ = name.withCString { strcpy(nameStart.assumingMemoryBound(to: CChar.self), $0) }
                offsets.append(offset)
                offset += length
            }
            guard offset == page else { exit(4) }
            for (name, offset) in zip(names, offsets) {
                let entry = UnsafePointer((base + offset).assumingMemoryBound(to: dirent.self))
                guard POSIXFile.name(of: entry) == name else { exit(5) }
            }
        }
    }

    @Test func aListingHasEveryNameOfALargeDirectory() throws {
        try withTemporaryDirectory { dir in
            // More records than readdir's 32 KiB buffer holds, of every name length from 1 to
            // 255 bytes, so that records end at every position of the buffer.
            var expected = Set<String>()
            for i in 0..<1500 {
                let length = 1 + i % 255
                let stem = String(i, radix: 36)
                let name = String((stem + String(repeating: "n", count: 255)).prefix(max(length, stem.count)))
                expected.insert(name)
            }
            for name in expected {
                #expect(FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil))
            }
            let listed = POSIXFile.contents(of: dir.path)
            #expect(listed.count == expected.count)
            #expect(Set(listed) == expected)
        }
    }

    /// The reopen of a cache whose fan-out holds thousands of value files, some of them full
    /// leaves (more than one `readdir` buffer): under AddressSanitizer the old copy of `d_name`
    /// was a heap-buffer-overflow on the first full buffer (`make sanitize`).
    @Test func aReopenReclaimsOrphansAmongThousandsOfValueFilesAndKeepsEveryValue() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(sizeLimit: .gigabytes(1), inlineThreshold: .bytes(64))
            let count = 2500
            do {
                let cache = try DiskCache(directory: dir, configuration: configuration)
                for i in 0..<count {
                    try cache.store(pattern(100 + i % 300, seed: UInt64(i)), forKey: "value-\(i)", pinned: i % 16 == 0)
                }
                cache.close()
            }
            // What killed writers leave behind: 1500 files without rows, crowded into one leaf.
            let data = dir.appendingPathComponent("data")
            let leaf = data.appendingPathComponent("0/0")
            try FileManager.default.createDirectory(at: leaf, withIntermediateDirectories: true)
            var orphans: [String] = []
            for _ in 0..<1500 {
                let name = POSIXFile.randomName()
                orphans.append(leaf.path + "/" + name)
                #expect(FileManager.default.createFile(atPath: orphans.last!, contents: pattern(70, seed: 7)))
            }
            let valueFiles = try regularFiles(under: data).count
            #expect(valueFiles >= count + orphans.count)

            let cache = try DiskCache(directory: dir, configuration: configuration)
            cache.waitForBackgroundWork()  // the reclaim that every open starts
            for orphan in orphans { #expect(!FileManager.default.fileExists(atPath: orphan)) }
            #expect(try regularFiles(under: data).count == valueFiles - orphans.count)
            var intact = 0
            for i in 0..<count where try cache.data(forKey: "value-\(i)") == pattern(100 + i % 300, seed: UInt64(i)) {
                intact += 1
            }
            #expect(intact == count)
            #expect(try cache.verify().isHealthy)
        }
    }

    private func regularFiles(under directory: URL) throws -> [URL] {
        let enumerator = try #require(
            FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]))
        return enumerator.compactMap { $0 as? URL }.filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }
    }
}
