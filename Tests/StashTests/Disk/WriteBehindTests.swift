import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#endif

/// Write-behind (issue 30): stores and removals return once staged, reads in the process see
/// them at once, other connections after the commit; `flush()` is the barrier; the staging
/// area is bounded; a failed background commit is dropped whole and reported.
@Suite struct WriteBehindTests {
    /// A configuration whose writer never commits on its own during a test (only on a full
    /// batch, a barrier or back-pressure), so that changes provably stay staged.
    ///
    /// Neither delay can run out during a test, however slow the machine: not the writer's
    /// (`maxWriteDelay`), nor the background write of recorded hits (`accessFlushDelay`, 1 s by
    /// default), which commits what is staged before it writes the hits that follow.
    static func staged(
        sizeLimit: ByteCount = .megabytes(10), stagingLimit: ByteCount? = nil,
        onEvent: (@Sendable (DiskCache.Event) -> Void)? = nil
    ) -> DiskCache.Configuration {
        .init(
            sizeLimit: sizeLimit, reclaimsOrphansOnOpen: false, accessFlushDelay: .seconds(3600),
            maxWriteDelay: .seconds(3600), stagingLimit: stagingLimit, onEvent: onEvent)
    }

    /// Holds `cache`'s writer on its queue until the returned semaphore is signalled; it lets go
    /// by itself after 30 s, so that a read or store that wrongly waits for it ends the test.
    static func holdWriter(of cache: DiskCache) -> DispatchSemaphore {
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        cache.writerQueue.async {
            holding.signal()
            _ = held.wait(timeout: .now() + 30)
        }
        holding.wait()
        return held
    }

    /// Runs `body` on a thread of its own, where it may block until the writer runs.
    ///
    /// The semaphore is signalled once it returned; the error it threw, if any, is then in
    /// `failure`.
    static func onAThread(
        _ body: @escaping @Sendable () throws -> Void
    ) -> (returned: DispatchSemaphore, failure: LockedValue<(any Error)?>) {
        let returned = DispatchSemaphore(value: 0)
        let failure = LockedValue<(any Error)?>(nil)
        DispatchQueue.global().async {
            do { try body() } catch { failure.withLock { $0 = error } }
            returned.signal()
        }
        return (returned, failure)
    }

    @Test func everyReadSeesStagedStoresAndRemovalsBeforeTheyCommit() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: Self.staged())
            // Another connection on the directory sees only what is committed.
            let other = try DiskCache(directory: dir, configuration: Self.staged())
            try await cache.store(pattern(100, seed: 1), forKey: "gone")
            try await cache.store(pattern(100, seed: 2), forKey: "replaced")
            try await cache.flush()
            #expect(try await other.containsData(forKey: "gone"))

            let expires = Date().addingTimeInterval(3600)
            try await cache.store(
                pattern(300, seed: 3), forKey: "inline", timeToLive: .seconds(3600),
                metadata: .init(contentType: "text/plain", etag: "\"e\""))
            try await cache.store(pattern(40_000, seed: 4), forKey: "file")
            try await cache.store(pattern(200, seed: 5), forKey: "replaced")
            try await cache.removeData(forKey: "gone")

            // Staged: the other connection does not see them yet.
            #expect(try await other.data(forKey: "inline") == nil)
            #expect(try await other.data(forKey: "file") == nil)
            #expect(try await other.data(forKey: "replaced") == pattern(100, seed: 2))
            #expect(try await other.containsData(forKey: "gone"))

            // data
            #expect(try await cache.data(forKey: "inline") == pattern(300, seed: 3))
            #expect(try await cache.data(forKey: "file") == pattern(40_000, seed: 4))
            #expect(try await cache.data(forKey: "replaced") == pattern(200, seed: 5))
            #expect(try await cache.data(forKey: "gone") == nil)
            #expect(try await cache.data(forKey: "file") == pattern(40_000, seed: 4))
            // containsData
            #expect(try await cache.containsData(forKey: "inline"))
            #expect(try await cache.containsData(forKey: "file"))
            #expect(try await !cache.containsData(forKey: "gone"))
            // attributes
            let inline = try #require(try await cache.attributes(forKey: "inline"))
            #expect(inline.size == 300)
            #expect(inline.isInline && !inline.isPinned)
            #expect(inline.metadata == .init(contentType: "text/plain", etag: "\"e\""))
            #expect(abs(try #require(inline.expires).timeIntervalSince(expires)) < 60)
            let file = try #require(try await cache.attributes(forKey: "file"))
            #expect(file.size == 40_000 && !file.isInline)
            #expect(try await cache.attributes(forKey: "replaced")?.size == 200)
            #expect(try await cache.attributes(forKey: "gone") == nil)
            // statistics: counted when staged
            let statistics = cache.statistics
            #expect(statistics.writes == 5)
            #expect(statistics.stagedBytes == 300 + 40_000 + 200)
            #expect(statistics.commits == 1)
            // Still staged after all those reads.
            #expect(try await other.data(forKey: "inline") == nil)

            // fileURL of a staged removal is a miss; of a staged value, a committed file.
            #expect(try await cache.fileURL(forKey: "gone") == nil)
            let url = try #require(try await cache.fileURL(forKey: "file"))
            #expect(try Data(contentsOf: url) == pattern(40_000, seed: 4))
            #expect(try await other.data(forKey: "file") == pattern(40_000, seed: 4))

            // Aggregates: allKeys, entries, totals.
            try await cache.store(pattern(10, seed: 6), forKey: "late")
            try await cache.removeData(forKey: "inline")
            #expect(Set(try cache.allKeys) == ["file", "replaced", "late"])
            try await cache.store(pattern(20, seed: 7), forKey: "later")
            try await cache.removeData(forKey: "late")
            var listed: [String: Int] = [:]
            for try await entry in cache.entries() { listed[entry.key] = entry.size }
            #expect(listed == ["file": 40_000, "replaced": 200, "later": 20])
            try await cache.store(pattern(30, seed: 8), forKey: "last")
            try await cache.removeData(forKey: "later")
            #expect(try cache.totalCount == 3)
            #expect(try cache.totalSize.bytes == 40_000 + 200 + 30)
            #expect(cache.statistics.stagedBytes == 0)
        }
    }

    @Test func flushIsABarrierForOtherConnectionsAndCloseFlushes() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: Self.staged())
            let other = try DiskCache(directory: dir, configuration: Self.staged())
            for i in 0..<50 { try await cache.store(pattern(100 + i, seed: UInt64(i)), forKey: "k\(i)") }
            #expect(try other.totalCount == 0)
            try await cache.flush()
            #expect(try other.totalCount == 50)
            #expect(try await other.data(forKey: "k49") == pattern(149, seed: 49))

            try await cache.removeData(forKey: "k0")
            try await cache.store(pattern(60_000, seed: 99), forKey: "async")
            #expect(try await other.containsData(forKey: "k0"))
            try await cache.flush()
            #expect(try await !other.containsData(forKey: "k0"))
            #expect(try await other.data(forKey: "async") == pattern(60_000, seed: 99))

            for i in 50..<60 { try await cache.store(pattern(10, seed: UInt64(i)), forKey: "k\(i)") }
            cache.waitForBackgroundWork()
            #expect(try other.totalCount == 60)

            try await cache.store(pattern(10, seed: 1000), forKey: "before-close")
            try await cache.removeData(forKey: "k1")
            cache.close()
            #expect(try await other.data(forKey: "before-close") == pattern(10, seed: 1000))
            #expect(try await !other.containsData(forKey: "k1"))
        }
    }

    @Test func openingAnotherObjectOnTheDirectoryCommitsWhatTheFirstStaged() throws {
        try withTemporaryDirectory { dir in
            let first = try DiskCache(directory: dir, configuration: Self.staged())
            try first.store(pattern(100, seed: 1), forKey: "a")
            try first.removeData(forKey: "b")
            let second = try DiskCache(directory: dir, configuration: Self.staged())
            #expect(try second.data(forKey: "a") == pattern(100, seed: 1))
            #expect(first.statistics.stagedBytes == 0)
        }
    }

    @Test func aStoreThatTakesTheCacheOverItsLimitIsCommittedAtOnce() throws {
        try withTemporaryDirectory { dir in
            let committed = LockedValue(0)
            var configuration = Self.staged(sizeLimit: .bytes(10_000))
            configuration.evictionPolicy = .leastRecentlyUsed
            configuration.onEviction = { _ in committed.withLock { $0 += 1 } }
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for i in 0..<9 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.flush()
            let commits = cache.statistics.commits
            // Over the limit: scheduled now, not after the hour-long delay.
            try cache.store(pattern(3000, seed: 9), forKey: "over")
            cache.writerQueue.sync {}  // waits for a commit already queued, not for a delayed one
            #expect(cache.statistics.commits == commits + 1)
            #expect(cache.statistics.stagedBytes == 0)
            #expect(committed.withLock { $0 } >= 2)
        }
    }

    /// Reads that do not wait for eviction (the proxy's disk hit and its read of a URL's `Vary`
    /// marker) answer while a commit is held.
    ///
    /// The commit is that of a store that took the cache over its limit: the read finds what is
    /// stored, where a read that waits gets its answer after the commit. Once committed, both
    /// caches keep the same entries: the non-waiting read's access to an entry the commit evicted
    /// changes nothing.
    @Test func readsThatDoNotWaitForEvictionAnswerWhileTheCommitIsHeld() throws {
        try withTemporaryDirectory { dir in
            var entries: [[String]] = []
            for waits in [false, true] {
                let directory = dir.appendingPathComponent(waits ? "waiting" : "not-waiting")
                var configuration = Self.staged(sizeLimit: .bytes(10_000))
                configuration.evictionPolicy = .leastRecentlyUsed
                let cache = try DiskCache(directory: directory, configuration: configuration)
                for i in 0..<9 { try cache.store(pattern(1000, seed: UInt64(i)), forKey: "k\(i)") }
                try cache.flush()
                // The writer is held, so the commit that the next store schedules cannot run.
                let held = Self.holdWriter(of: cache)
                try cache.store(pattern(3000, seed: 9), forKey: "over")  // evicts the oldest
                let commits = cache.statistics.commits
                if waits {
                    held.signal()
                    let entry = try cache.entry(forKey: "k0", decodingExtra: false, waitingForEviction: true)
                    #expect(entry == nil)  // after the commit, which evicted it
                    #expect(cache.statistics.commits == commits + 1)
                    #expect(try cache.attributes(forKey: "k8", waitingForEviction: true)?.size == 1000)
                } else {
                    let entry = try cache.entry(forKey: "k0", decodingExtra: false, waitingForEviction: false)
                    let attributes = try cache.attributes(forKey: "k0", waitingForEviction: false)
                    // Answered with the writer still held: no commit ran for them.
                    #expect(cache.statistics.commits == commits)
                    held.signal()
                    #expect(entry?.inlineBytes == pattern(1000, seed: 0))
                    #expect(attributes?.size == 1000)
                }
                try cache.flush()
                entries.append(try (0..<9).map { "k\($0)" }.filter { try cache.containsData(forKey: $0) })
            }
            #expect(entries[0] == entries[1])
            #expect(!entries[0].contains("k0"))
        }
    }

    @Test func aCacheDeallocatedWithStagedChangesCommitsThem() throws {
        try withTemporaryDirectory { dir in
            do {
                let cache = try DiskCache(directory: dir, configuration: Self.staged())
                try cache.store(pattern(50_000, seed: 1), forKey: "file")
                try cache.store(pattern(50, seed: 2), forKey: "inline")
            }
            let reopened = try DiskCache(directory: dir, configuration: Self.staged())
            #expect(try reopened.data(forKey: "file") == pattern(50_000, seed: 1))
            #expect(try reopened.data(forKey: "inline") == pattern(50, seed: 2))
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
        }
    }

    @Test func pinnedStoresPinAndUnpinCommitBeforeTheyReturn() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: Self.staged())
            let other = try DiskCache(directory: dir, configuration: Self.staged())
            try cache.store(pattern(100, seed: 1), forKey: "pinned", pinned: true)
            #expect(try other.attributes(forKey: "pinned")?.isPinned == true)
            try cache.store(pattern(100, seed: 2), forKey: "plain")
            #expect(try cache.pin("plain"))
            #expect(try other.attributes(forKey: "plain")?.isPinned == true)
            #expect(try cache.unpin("pinned"))
            #expect(try other.attributes(forKey: "pinned")?.isPinned == false)
        }
    }

    @Test func durableStoresCommitBeforeTheyReturn() throws {
        try withTemporaryDirectory { dir in
            var configuration = Self.staged()
            configuration.durability = .durable
            let cache = try DiskCache(directory: dir, configuration: configuration)
            let other = try DiskCache(directory: dir, configuration: Self.staged())
            try cache.store(pattern(100, seed: 1), forKey: "k")
            #expect(try other.data(forKey: "k") == pattern(100, seed: 1))
        }
    }

    @Test func aStoreThatWouldOverflowTheStagingAreaWaitsForTheWriter() async throws {
        try await withTemporaryDirectory { dir in
            let bound = 64 * 1024
            let cache = try DiskCache(
                directory: dir, configuration: Self.staged(sizeLimit: .megabytes(100), stagingLimit: .bytes(bound)))
            // 100 times the bound, from four threads at once; the writer never commits on a timer.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for thread in 0..<4 {
                    group.addTask {
                        for i in 0..<(100 * bound / 1024 / 4) {
                            let size = i % 50 == 0 ? 40_000 : 1024
                            try cache.store(pattern(size, seed: UInt64(i)), forKey: "t\(thread)-\(i)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            // The bound is on the bytes held in memory: the values of 40,000 bytes wait in their
            // temporary files, within 5 % of the size limit.
            let statistics = cache.statistics
            #expect(statistics.peakStagedMemoryBytes <= bound)
            #expect(statistics.peakStagedMemoryBytes > bound / 2)
            #expect(statistics.peakStagedBytes <= 100_000_000 / 20)
            #expect(statistics.commits > 50)
            #expect(try cache.totalCount == 100 * bound / 1024)
        }
    }

    /// `storeWithoutWaiting` (what `stash serve`'s event loops store with) stages a small value
    /// while the writer is held, and refuses, staging nothing and writing no file, where a
    /// `store` would write a temporary file or wait for the writer; a refused value stored after
    /// by `store` is kept.
    @Test func aStoreWithoutWaitingStagesOnlyWhatNeedsNoWaitAndNoFile() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, configuration: Self.staged(stagingLimit: .bytes(10_000)))
            let held = Self.holdWriter(of: cache)
            #expect(try cache.storeWithoutWaiting(pattern(6000, seed: 1), forKey: "first"))
            #expect(try cache.data(forKey: "first") == pattern(6000, seed: 1))  // staged, not committed
            #expect(cache.statistics.stagedBytes == 6000)
            // 6,000 + 6,000 bytes would pass the 10,000 in memory: refused, not waited for.
            // At the inline threshold a store writes a temporary file: refused too.
            let answers = LockedValue<[Bool]>([])
            let (returned, failure) = Self.onAThread {
                let second = try cache.storeWithoutWaiting(pattern(6000, seed: 2), forKey: "second")
                let large = try cache.storeWithoutWaiting(pattern(32 * 1024, seed: 3), forKey: "large")
                answers.withLock { $0 = [second, large] }
            }
            #expect(returned.wait(timeout: .now() + 10) == .success)
            #expect(failure.withLock { $0 } == nil)
            #expect(answers.withLock { $0 } == [false, false])
            #expect(cache.statistics.stagedBytes == 6000)
            #expect(try cache.data(forKey: "second") == nil)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            #expect(throws: StashError.self) { try cache.storeWithoutWaiting(Data([1]), forKey: "") }
            held.signal()
            try cache.store(pattern(6000, seed: 2), forKey: "second")
            try cache.flush()
            #expect(try cache.data(forKey: "first") == pattern(6000, seed: 1))
            #expect(try cache.data(forKey: "second") == pattern(6000, seed: 2))
            #expect(try cache.totalCount == 2)
            // A cache that commits each store refuses every one: its stores wait for the disk.
            var immediate = Self.staged()
            immediate.writeMode = .immediate
            let other = try DiskCache(directory: dir.appendingPathComponent("immediate"), configuration: immediate)
            #expect(try !other.storeWithoutWaiting(pattern(100, seed: 4), forKey: "small"))
            #expect(try other.data(forKey: "small") == nil)
        }
    }

    /// The benchmarked alternative: the writer writes value files when it commits.
    @Test func valueFilesWrittenByTheWriterArePublishedAndFailuresLeaveNoFile() throws {
        try withTemporaryDirectory { dir in
            var configuration = Self.staged()
            configuration.writesValueFilesInBackground = true
            let cache = try DiskCache(directory: dir, configuration: configuration)
            try cache.store(pattern(40_000, seed: 1), forKey: "a")
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)  // not written yet
            #expect(try cache.data(forKey: "a") == pattern(40_000, seed: 1))
            try cache.flush()
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 1)
            #expect(try cache.attributes(forKey: "a")?.isInline == false)
            cache.faults.withLock { $0.write = { path in path.hasSuffix(".tmp") ? EIO : nil } }
            try cache.store(pattern(40_000, seed: 2), forKey: "b")
            #expect(throws: StashError.self) { try cache.flush() }
            #expect(try cache.data(forKey: "b") == nil)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 1)
        }
    }

    @Test func aValueLargerThanTheStagingAreaIsStagedAlone() throws {
        try withTemporaryDirectory { dir in
            var configuration = Self.staged(stagingLimit: .bytes(10_000))
            configuration.inlineThreshold = .megabytes(1)  // both values staged in memory
            let cache = try DiskCache(directory: dir, configuration: configuration)
            try cache.store(pattern(5000, seed: 1), forKey: "small")
            try cache.store(pattern(200_000, seed: 2), forKey: "large")
            #expect(cache.statistics.peakStagedBytes == 200_000)
            #expect(cache.statistics.peakStagedMemoryBytes == 200_000)
            #expect(try cache.data(forKey: "small") == pattern(5000, seed: 1))
            #expect(try cache.data(forKey: "large") == pattern(200_000, seed: 2))
        }
    }

    /// Values in temporary files do not count against the bound on memory: with the writer held,
    /// stores of them return until all the staged bytes reach 5 % of the size limit; the next
    /// one waits for the writer.
    @Test func valuesInTemporaryFilesWaitForTheWriterOnlyAt5PercentOfTheSizeLimit() throws {
        try withTemporaryDirectory { dir in
            // 10 MB: at most 500,000 bytes staged in all, 10,000 of them in memory.
            let cache = try DiskCache(directory: dir, configuration: Self.staged(stagingLimit: .bytes(10_000)))
            let held = Self.holdWriter(of: cache)
            for i in 0..<12 { try cache.store(pattern(40_000, seed: UInt64(i)), forKey: "file\(i)") }
            try cache.store(pattern(9000, seed: 20), forKey: "inline")
            #expect(cache.statistics.stagedBytes == 12 * 40_000 + 9000)
            #expect(cache.statistics.peakStagedMemoryBytes == 9000)
            #expect(cache.statistics.commits == 0)
            // 489,000 + 40,000 bytes would pass 500,000: this store waits for the writer.
            let (returned, failure) = Self.onAThread { try cache.store(pattern(40_000, seed: 30), forKey: "over") }
            #expect(returned.wait(timeout: .now() + 1) == .timedOut)
            held.signal()
            returned.wait()
            #expect(failure.withLock { $0 } == nil)
            #expect(cache.statistics.commits >= 1)
            for i in 0..<12 { #expect(try cache.data(forKey: "file\(i)") == pattern(40_000, seed: UInt64(i))) }
            #expect(try cache.data(forKey: "over") == pattern(40_000, seed: 30))
        }
    }

    /// Each value waiting in a temporary file keeps its descriptor open until its commit: at most
    /// 256 wait at once, whatever the bound on bytes, and the next store waits for the writer.
    @Test func atMost256ValuesWaitInTemporaryFiles() throws {
        try withTemporaryDirectory { dir in
            // 1 GB: 50 MB may be staged in all, far more than 256 values of 32 KiB.
            let cache = try DiskCache(directory: dir, configuration: Self.staged(sizeLimit: .megabytes(1000)))
            let held = Self.holdWriter(of: cache)
            let size = 32 * 1024  // the inline threshold: each value goes to a file
            for i in 0..<DiskCache.stagedFileCountLimit {
                try cache.store(pattern(size, seed: UInt64(i)), forKey: "file\(i)")
            }
            #expect(cache.statistics.commits == 0)
            try cache.store(pattern(100, seed: 1), forKey: "inline")  // no file: not held back
            let (returned, failure) = Self.onAThread { try cache.store(pattern(size, seed: 999), forKey: "one more") }
            #expect(returned.wait(timeout: .now() + 1) == .timedOut)
            held.signal()
            returned.wait()
            #expect(failure.withLock { $0 } == nil)
            try cache.flush()
            #expect(try cache.data(forKey: "one more") == pattern(size, seed: 999))
            #expect(try cache.totalCount == DiskCache.stagedFileCountLimit + 2)
        }
    }

    @Test func aFailedBackgroundCommitIsDroppedWholeReportedAndThrownByTheNextCall() throws {
        try withTemporaryDirectory { dir in
            let events = LockedValue<[String]>([])
            let cache = try DiskCache(
                directory: dir,
                configuration: Self.staged(onEvent: { event in
                    if case .commitFailed(let changes, let error) = event {
                        events.withLock { $0.append("\(changes) \(error.code)") }
                    }
                }))
            try cache.store(pattern(100, seed: 1), forKey: "kept")
            try cache.flush()
            // The value files' descriptions are written in the commit: fail them with EIO.
            cache.faults.withLock { $0.write = { path in path.hasSuffix(".meta") ? EIO : nil } }
            try cache.store(pattern(100, seed: 2), forKey: "inline")
            try cache.store(pattern(50_000, seed: 3), forKey: "file")
            try cache.removeData(forKey: "kept")
            #expect(try cache.data(forKey: "file") == pattern(50_000, seed: 3))
            cache.waitForBackgroundWork()  // commits, and fails
            #expect(events.withLock { $0 } == ["3 io"])
            #expect(cache.statistics.failedCommits == 1)
            #expect(cache.statistics.droppedChanges == 3)
            // Nothing of the batch is in the index, and none of its files is left.
            #expect(try cache.data(forKey: "inline") == nil)
            #expect(try cache.data(forKey: "file") == nil)
            #expect(try cache.data(forKey: "kept") == pattern(100, seed: 1))
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).isEmpty)
            #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
            // A store that may not wait leaves the failure to the next store that may.
            #expect(try !cache.storeWithoutWaiting(pattern(10, seed: 5), forKey: "quick"))
            #expect(try cache.data(forKey: "quick") == nil)
            // The next call throws the failure, once, and changes nothing.
            #expect {
                try cache.store(pattern(10, seed: 4), forKey: "next")
            } throws: { error in
                (error as? StashError)?.code == .io
            }
            #expect(try cache.data(forKey: "next") == nil)
            cache.faults.withLock { $0.write = nil }
            try cache.store(pattern(10, seed: 4), forKey: "next")
            try cache.flush()
            #expect(try cache.data(forKey: "next") == pattern(10, seed: 4))
            #expect(try cache.verify().isHealthy)
        }
    }

    // Linux only: mounts a tmpfs with Linux's mount(2) and umount2(2) (macOS has neither the calls
    // nor tmpfs); the injected-fault tests cover the same path everywhere.
    #if os(Linux)
        @Test(
            .enabled(if: DiskFullTests.canMountTmpfs, "mounting a tmpfs needs root; the injected fault covers the path")
        )
        func aCommitOnAFullTmpfsIsDroppedAndFlushThrowsIt() throws {
            try withTemporaryDirectory { parent in
                let mountPoint = parent.appendingPathComponent("small")
                try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
                try #require(mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=2m") == 0)
                defer { umount2(mountPoint.path, Int32(MNT_DETACH)) }
                let dir = mountPoint.appendingPathComponent("cache")
                let failed = LockedValue(0)
                let cache = try DiskCache(
                    directory: dir,
                    configuration: Self.staged(onEvent: { event in
                        if case .commitFailed = event { failed.withLock { $0 += 1 } }
                    }))
                defer { cache.close() }
                // Pinned: the writer's disk-full recovery finds nothing to evict.
                try cache.store(pattern(100, seed: 1), forKey: "first", pinned: true)
                for i in 0..<3 { try cache.store(pattern(100_000, seed: UInt64(i)), forKey: "k\(i)") }
                // Fill the rest of the disk, so that the commit finds no room, and nothing to evict.
                let filler = mountPoint.appendingPathComponent("filler").path
                let fd = open(filler, O_CREAT | O_WRONLY, 0o600)
                try #require(fd >= 0)
                let block = [UInt8](repeating: 7, count: 4096)
                while write(fd, block, block.count) > 0 {}
                close(fd)
                #expect {
                    try cache.flush()
                } throws: { error in
                    (error as? StashError)?.code == .diskFull
                }
                #expect(failed.withLock { $0 } == 1)
                for i in 0..<3 { #expect(try cache.data(forKey: "k\(i)") == nil) }
                #expect(filesBelow(dir.appendingPathComponent("tmp")).isEmpty)
                #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 1)  // the pinned value
                // With room again, the cache works.
                try FileManager.default.removeItem(atPath: filler)
                try cache.store(pattern(100_000, seed: 9), forKey: "after")
                try cache.flush()
                #expect(try cache.data(forKey: "after") == pattern(100_000, seed: 9))
                #expect(try cache.data(forKey: "first") == pattern(100, seed: 1))
            }
        }
    #endif

    @Test func anotherProcessSeesAStoreWithinTheWriteDelay() throws {
        try withTemporaryDirectory { dir in
            let delay = 100
            let (process, output) = try Worker.start(["stage-one", dir.path, "\(delay)"])
            defer {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            #expect(Worker.waitForLines(output, prefix: "stored", count: 1))
            let stored = ContinuousClock.now
            let reader = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(10)))
            var seenAfter: Duration?
            while seenAfter == nil, ContinuousClock.now - stored < .seconds(10) {
                if try reader.containsData(forKey: "probe") { seenAfter = ContinuousClock.now - stored }
            }
            let latency = try #require(seenAfter)
            // The child's delay, plus room for a loaded machine's scheduling (the child's store
            // happened before it printed, so the true latency is shorter than measured).
            #expect(latency < .milliseconds(delay + 400), "seen after \(latency)")
        }
    }
}
