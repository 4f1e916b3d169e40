import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk makes the cache shrink, not fail: a store evicts and retries, the effective
/// limit drops to what the disk holds, and only when nothing can be evicted does it throw.
@Suite struct DiskFullTests {
    /// Injects ENOSPC into the next `count` writes whose path passes `matching`.
    private func failWrites(
        _ cache: DiskCache, count: Int, matching: @escaping @Sendable (String) -> Bool = { _ in true }
    )
        -> LockedValue<Int>
    {
        let remaining = LockedValue(count)
        cache.faults.withLock {
            $0.write = { path in
                guard matching(path) else { return nil }
                return remaining.withLock { left in
                    guard left > 0 else { return nil }
                    left -= 1
                    return ENOSPC
                }
            }
        }
        return remaining
    }

    @Test func aStoreThatMeetsAFullDiskEvictsRetriesAndLowersTheEffectiveLimit() throws {
        try withTemporaryDirectory { dir in
            let events = LockedValue([String]())
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(sizeLimit: .megabytes(1), onEvent: { e in events.withLock { $0.append("\(e)") } }))
            try cache.store(pattern(50_000, seed: 100), forKey: "pinned", pinned: true)
            for i in 0..<5 { try cache.store(pattern(100_000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.flush()  // committed before the disk fills
            _ = failWrites(cache, count: 1)
            try cache.store(pattern(100_000, seed: 9), forKey: "new")
            #expect(try cache.data(forKey: "new") == pattern(100_000, seed: 9))
            #expect(try cache.data(forKey: "pinned") == pattern(50_000, seed: 100))
            #expect(cache.statistics.diskFullRetries == 1)
            // The disk held the 500 000 unpinned bytes but not 100 000 more.
            #expect(cache.effectiveSizeLimit == .bytes(400_000))
            #expect(cache.statistics.effectiveSizeLimit == .bytes(400_000))
            #expect(
                events.withLock { $0 }.contains(
                    "the disk is full: effective size limit lowered to \(ByteCount(400_000))"))
            // Room for twice the value was made: the two least useful entries went.
            #expect(try cache.totalSize.bytes - cache.pinnedSize.bytes == 400_000)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            // Later stores keep to the lowered limit before the disk fills again.
            for i in 10..<16 { try cache.store(pattern(100_000, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(try cache.totalSize.bytes - cache.pinnedSize.bytes <= 400_000)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func aFullDiskWithNothingToEvictThrowsAClearErrorAndChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            try cache.store(pattern(50_000, seed: 1), forKey: "pinned", pinned: true)
            try cache.store(pattern(100_000, seed: 2), forKey: "old")
            try cache.flush()  // committed before the disk fills
            _ = failWrites(cache, count: .max)
            #expect {
                try cache.store(pattern(40_000, seed: 3), forKey: "new")
            } throws: { error in
                let error = error as? StashError
                return error?.code == .diskFull && error?.message.contains("'new'") == true
                    && error?.message.contains(dir.path) == true
            }
            #expect(try cache.data(forKey: "pinned") == pattern(50_000, seed: 1))
            #expect(try cache.data(forKey: "new") == nil)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func aFullDiskWhileWritingTheDescriptionLeavesNoPartialFile() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            try cache.store(pattern(100_000, seed: 1), forKey: "old")
            try cache.flush()  // committed before the disk fills
            _ = failWrites(cache, count: 1) { $0.hasSuffix(".meta") }
            try cache.store(pattern(100_000, seed: 2), forKey: "new")
            #expect(try cache.data(forKey: "new") == pattern(100_000, seed: 2))
            // The description is written when the store commits: the writer evicts and retries.
            try cache.flush()
            #expect(try cache.data(forKey: "new") == pattern(100_000, seed: 2))
            #expect(cache.statistics.diskFullRetries == 1)
            #expect(!filesBelow(dir).contains { $0.hasSuffix(".tmp") })
            cache.waitForBackgroundWork()
            #expect(try cache.reclaimOrphans().count == 0)
        }
    }

    // Linux only: mounts a tmpfs with Linux's mount(2) and umount2(2) (macOS has neither the calls
    // nor tmpfs); the injected-fault tests cover the same path everywhere.
    // `canMountTmpfs` gates the tmpfs tests of BadInputTests and WriteBehindTests too.
    #if os(Linux)
        static let canMountTmpfs: Bool = {
            guard getuid() == 0 else { return false }
            let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-probe-\(UUID().uuidString)")
            guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil else {
                return false
            }
            defer { try? FileManager.default.removeItem(at: probe) }
            guard mount("tmpfs", probe.path, "tmpfs", 0, "size=64k") == 0 else { return false }
            umount(probe.path)
            return true
        }()

        @Test(
            .enabled(
                if: canMountTmpfs,
                "mounting a 3 MB tmpfs needs root (or CAP_SYS_ADMIN); the fault-injection tests cover the path"))
        func aRealFullTmpfsShrinksTheCacheAndOnlyFailsWhenPinnedDataFillsIt() throws {
            try withTemporaryDirectory { parent in
                let mountPoint = parent.appendingPathComponent("small")
                try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
                try #require(mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=3m") == 0)
                defer { umount2(mountPoint.path, Int32(MNT_DETACH)) }
                let dir = mountPoint.appendingPathComponent("cache")
                let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
                defer { cache.close() }
                try cache.store(pattern(300_000, seed: 1000), forKey: "pinned-0", pinned: true)
                for i in 0..<30 {
                    try cache.store(pattern(200_000, seed: UInt64(i)), forKey: "k\(i)")
                    #expect(try cache.data(forKey: "k\(i)") == pattern(200_000, seed: UInt64(i)))
                }
                #expect(cache.statistics.diskFullRetries >= 1)
                #expect(cache.effectiveSizeLimit < .megabytes(3))
                try cache.flush()  // staged values hold their temporary files until they commit
                #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
                // Pinned data cannot be evicted: once it fills the disk, the store fails clearly.
                var pinned = 1
                var failure: StashError?
                while failure == nil && pinned < 20 {
                    do {
                        try cache.store(
                            pattern(300_000, seed: 1000 + UInt64(pinned)), forKey: "pinned-\(pinned)", pinned: true)
                        pinned += 1
                    } catch let error as StashError {
                        failure = error
                    }
                }
                #expect(failure?.code == .diskFull, "\(String(describing: failure))")
                for i in 0..<pinned {
                    #expect(try cache.data(forKey: "pinned-\(i)") == pattern(300_000, seed: 1000 + UInt64(i)))
                }
                #expect(try cache.totalSize == cache.pinnedSize)
                #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            }
        }
    #endif
}
