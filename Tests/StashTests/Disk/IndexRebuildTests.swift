import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#endif

/// A lost or damaged index is moved aside and rebuilt from the self-describing value files:
/// every pinned entry comes back byte-identical, every file-backed entry comes back.
@Suite struct IndexRebuildTests {
    /// The entries every damage case starts from: inline, file-backed and pinned, small and large.
    ///
    /// Computed on each use rather than kept in a static, which LeakSanitizer would report at exit (a
    /// `Data` in a global is held through tag bits it does not see through).
    static var entries: [(key: String, value: Data, pinned: Bool)] {
        [
            ("inline", pattern(100, seed: 1), false),
            ("file", pattern(100_000, seed: 2), false),
            ("pinned-small", pattern(10, seed: 3), true),
            ("pinned-large", pattern(60_000, seed: 4), true),
            ("pinned-later", pattern(200, seed: 5), true),
            ("odd \u{0}key ☃ e\u{301}", pattern(40_000, seed: 6), false),
        ]
    }

    /// Stores ``entries`` (pinning `pinned-later` after storing it inline) and returns the open cache.
    private func populate(_ dir: URL) throws -> DiskCache {
        let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
        for (key, value, pinned) in Self.entries {
            try cache.store(
                value, forKey: key, pinned: pinned && key != "pinned-later",
                metadata: .init(contentType: "application/x-\(key.count)", etag: "\"\(key.utf8.count)\""))
        }
        #expect(try cache.pin("pinned-later"))
        return cache
    }

    private func events(_ dir: URL) throws -> (DiskCache, LockedValue<[DiskCache.Event]>) {
        let events = LockedValue([DiskCache.Event]())
        let cache = try DiskCache(
            directory: dir, configuration: .init(onEvent: { event in events.withLock { $0.append(event) } }))
        return (cache, events)
    }

    /// What a crash leaves: a copy of the directory taken while the cache was open, WAL and all,
    /// with the value files' extended attributes (which `copyItem` drops).
    private func crashSnapshot(of dir: URL, to copy: URL) throws -> DiskCache {
        let cache = try populate(dir)
        try FileManager.default.copyItem(at: dir, to: copy)
        for file in filesBelow(dir) {
            let path = dir.appendingPathComponent(file).path
            if let description = POSIXFile.attribute(ValueSidecar.attributeName, ofFile: path) {
                let copied = copy.appendingPathComponent(file).path
                #expect(try POSIXFile.setAttribute(ValueSidecar.attributeName, to: description, ofFile: copied))
            }
        }
        return cache
    }

    private func damage(_ index: URL, _ kind: String) throws {
        let handle = try FileHandle(forUpdating: index)
        defer { try? handle.close() }
        switch kind {
        case "corrupt header":
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: pattern(200, seed: 99))
        case "truncated":
            let size = try handle.seekToEnd()
            try handle.truncate(atOffset: size / 2)
        default:
            Issue.record("unknown damage \(kind)")
        }
    }

    @Test(arguments: ["corrupt header", "truncated", "deleted index", "deleted WAL", "garbage WAL"])
    func everyPinnedAndFileEntryComesBackAfterDamage(kind: String) throws {
        try withTemporaryDirectory { parent in
            let original = parent.appendingPathComponent("original")
            let dir = parent.appendingPathComponent("damaged")
            let index = dir.appendingPathComponent("index.sqlite")
            switch kind {
            case "deleted WAL", "garbage WAL":
                let writer = try crashSnapshot(of: original, to: dir)
                defer { writer.close() }
                let wal = index.path + "-wal"
                let walSize = try #require(POSIXFile.size(wal)?.logical)
                #expect(walSize > 0)
                if kind == "deleted WAL" {
                    try FileManager.default.removeItem(atPath: wal)
                } else {
                    try pattern(walSize, seed: 7).write(to: URL(fileURLWithPath: wal))
                }
            default:
                try populate(dir).close()
                if kind == "deleted index" {
                    try FileManager.default.removeItem(at: index)
                } else {
                    try damage(index, kind)
                }
            }
            let (cache, events) = try events(dir)
            cache.waitForBackgroundWork()
            for (key, value, pinned) in Self.entries where pinned || value.count >= 32 * 1024 {
                #expect(try cache.data(forKey: key) == value, "\(key)")
                let attributes = try #require(try cache.attributes(forKey: key))
                #expect(attributes.isPinned == pinned, "\(key)")
                #expect(attributes.metadata.etag == "\"\(key.utf8.count)\"", "\(key)")
            }
            #expect(try cache.pinnedCount == 3)
            let rebuilt = events.withLock { $0 }.compactMap { event -> [Int]? in
                if case .indexRebuilt(let recovered, let lost) = event { return [recovered, lost] }
                return nil
            }
            #expect(rebuilt.count == 1, "\(events.withLock { $0 })")
            #expect((rebuilt.first?[0] ?? 0) >= 5)
            #expect(rebuilt.first?[1] == 0)
            let record = try #require(cache.lastIndexRebuild)
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            if kind == "deleted index" {
                #expect(record.movedTo == nil)
            } else {
                // Moved aside, never deleted.
                let aside = try #require(record.movedTo)
                #expect(names.contains((aside as NSString).lastPathComponent))
                #expect(aside.hasPrefix(index.path + ".corrupt-"))
            }
            #expect(!names.contains(IndexRecovery.markerName))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func aRebuildKilledMidwayIsRedoneByTheNextOpen() throws {
        try withTemporaryDirectory { dir in
            try populate(dir).close()
            // What SIGKILL after moving the index aside leaves: the marker, a partial new index.
            let index = dir.appendingPathComponent("index.sqlite")
            try FileManager.default.moveItem(
                at: index, to: dir.appendingPathComponent("index.sqlite.corrupt-20260101T000000Z"))
            try pattern(5000, seed: 8).write(to: dir.appendingPathComponent("index.sqlite.rebuilding"))
            try Data().write(to: dir.appendingPathComponent(IndexRecovery.markerName))
            let (cache, events) = try events(dir)
            #expect(try cache.data(forKey: "pinned-large") == pattern(60_000, seed: 4))
            #expect(try cache.pinnedCount == 3)
            #expect(cache.lastIndexRebuild?.reason == "an earlier rebuild was interrupted")
            #expect(events.withLock { $0 }.contains { "\($0)".hasPrefix("index rebuilt from the value files") })
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(IndexRecovery.markerName).path))
        }
    }

    @Test func aRebuildKilledWithSIGKILLIsRedoneByTheNextOpen() throws {
        try withTemporaryDirectory { dir in
            do {
                // A thousand value files: the rebuild reports progress (where the worker stops)
                // every thousand.
                let cache = try DiskCache(
                    directory: dir, configuration: .init(sizeLimit: .megabytes(10), inlineThreshold: .bytes(1)))
                for i in 0..<IndexBuilder.progressInterval {
                    try cache.store(pattern(64, seed: UInt64(i)), forKey: "k\(i)", pinned: i.isMultiple(of: 10))
                }
                cache.close()
            }
            try FileManager.default.removeItem(at: dir.appendingPathComponent("index.sqlite"))
            let (process, output) = try Worker.start(["stall-rebuild", dir.path])
            #expect(Worker.waitForLines(output, prefix: "rebuilding", count: 1))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(IndexRecovery.markerName).path))

            let (cache, _) = try events(dir)
            #expect(cache.lastIndexRebuild?.reason == "an earlier rebuild was interrupted")
            #expect(try cache.totalCount == IndexBuilder.progressInterval)
            #expect(try cache.pinnedCount == IndexBuilder.progressInterval / 10)
            for i in stride(from: 0, to: IndexBuilder.progressInterval, by: 97) {
                #expect(try cache.data(forKey: "k\(i)") == pattern(64, seed: UInt64(i)))
            }
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(IndexRecovery.markerName).path))
        }
    }

    @Test func aHealthyIndexIsNotRebuilt() throws {
        try withTemporaryDirectory { dir in
            try populate(dir).close()
            let (cache, events) = try events(dir)
            cache.waitForBackgroundWork()
            #expect(cache.lastIndexRebuild == nil)
            #expect(events.withLock { $0 }.isEmpty)
            #expect(try cache.totalCount == Self.entries.count)
        }
    }

    @Test func aForcedRebuildKeepsEveryEntryIncludingInlineOnes() throws {
        try withTemporaryDirectory { dir in
            let cache = try populate(dir)
            let rebuild = try cache.rebuildIndex()
            #expect(rebuild.recovered == Self.entries.count)
            #expect(rebuild.lost == 0)
            #expect(rebuild.reason == "requested")
            for (key, value, pinned) in Self.entries {
                #expect(try cache.data(forKey: key) == value, "\(key)")
                #expect(try cache.attributes(forKey: key)?.isPinned == pinned, "\(key)")
            }
            try cache.store(Data("after".utf8), forKey: "after")
            #expect(try cache.data(forKey: "after") == Data("after".utf8))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func verifyRepairRebuildsADamagedIndex() throws {
        try withTemporaryDirectory { dir in
            let cache = try populate(dir)
            // Damage a page past the header that the cheap checks on open read; the cache
            // reopens its index on the next call.
            let index = dir.appendingPathComponent("index.sqlite")
            cache.close()
            let handle = try FileHandle(forUpdating: index)
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: 4096)
            try handle.write(contentsOf: pattern(Int(size) - 4096, seed: 9))
            try handle.close()
            let report = try cache.verify(repair: true)
            #expect(!report.indexProblems.isEmpty)
            #expect(report.repaired)
            let rebuild = try #require(report.rebuild)
            #expect(rebuild.lost == 0)
            #expect(try cache.data(forKey: "pinned-small") == pattern(10, seed: 3))
            #expect(try cache.data(forKey: "file") == pattern(100_000, seed: 2))
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func anUnpinnedValueIsDescribedInAnAttributeAPinnedOneOrAnOversizedOneInASidecarFile() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(10))
            // A description larger than any file system's extended attribute (64 KiB on Linux).
            let longKey = String(repeating: "k", count: 70_000)
            try cache.store(pattern(40_000, seed: 1), forKey: "unpinned")
            try cache.store(pattern(40_000, seed: 2), forKey: "pinned", pinned: true)
            try cache.store(pattern(40_000, seed: 3), forKey: longKey)
            try cache.flush()
            let data = dir.appendingPathComponent("data")
            func file(_ key: String) throws -> String {
                let url = try #require(try cache.fileURL(forKey: key))
                return String(url.path.dropFirst(data.path.count + 1))
            }
            let sidecars = Set(filesBelow(data).filter { $0.hasSuffix(ValueSidecar.suffix) })
            #expect(sidecars == [try file("pinned") + ValueSidecar.suffix, try file(longKey) + ValueSidecar.suffix])
            #expect(describedValueFilesBelow(data).count == 3)
            let attribute = POSIXFile.attribute(
                ValueSidecar.attributeName, ofFile: data.appendingPathComponent(try file("unpinned")).path)
            #expect(try ValueSidecar.decode(#require(attribute))?.keyBytes == Data("unpinned".utf8))
            // Unpinning keeps the sidecar file, which stays the description that counts.
            #expect(try cache.unpin("pinned"))
            #expect(filesBelow(data).contains(try file("pinned") + ValueSidecar.suffix))
            cache.close()
            try FileManager.default.removeItem(at: dir.appendingPathComponent("index.sqlite"))
            let (reopened, _) = try events(dir)
            #expect(reopened.lastIndexRebuild?.recovered == 3)
            #expect(try reopened.data(forKey: "unpinned") == pattern(40_000, seed: 1))
            #expect(try reopened.data(forKey: longKey) == pattern(40_000, seed: 3))
            #expect(try reopened.attributes(forKey: "pinned")?.isPinned == false)
        }
    }

    @Test func valueFilesWithoutADescriptionAreCountedAsLost() throws {
        try withTemporaryDirectory { dir in
            try populate(dir).close()
            // A value file as the previous version wrote it: bytes only, no sidecar.
            let data = dir.appendingPathComponent("data")
            let described = try #require(describedValueFilesBelow(data).first)
            try removeDescription(ofValueFile: described, below: data)
            try FileManager.default.removeItem(at: dir.appendingPathComponent("index.sqlite"))
            let (cache, _) = try events(dir)
            let record = try #require(cache.lastIndexRebuild)
            #expect(record.lost == 1)
            #expect(record.recovered == 4)
            #expect(try cache.totalCount == 4)
        }
    }

    @Test func aCacheWrittenBeforeSidecarsStillReadsAndGainsThemWhenWritten() throws {
        try withTemporaryDirectory { dir in
            try populate(dir).close()
            let data = dir.appendingPathComponent("data")
            for file in describedValueFilesBelow(data) { try removeDescription(ofValueFile: file, below: data) }
            #expect(describedValueFilesBelow(data).isEmpty)
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            cache.waitForBackgroundWork()
            for (key, value, _) in Self.entries {
                #expect(try cache.data(forKey: key) == value, "\(key)")
            }
            #expect(try cache.verify().isHealthy)
            #expect(cache.lastIndexRebuild == nil)
            #expect(try cache.unpin("pinned-large"))
            #expect(try cache.fileURL(forKey: "inline") != nil)
            #expect(describedValueFilesBelow(data).count == 2)
        }
    }

    @Test func anIndexFromANewerSchemaIsRefusedAndLeftUntouched() throws {
        try withTemporaryDirectory { dir in
            try populate(dir).close()
            let index = dir.appendingPathComponent("index.sqlite")
            let db = try SQLiteConnection(path: index.path, busyTimeout: .seconds(1))
            try db.execute("PRAGMA user_version = 99")
            db.close()
            let before = try Data(contentsOf: index)
            #expect {
                _ = try DiskCache(directory: dir, sizeLimit: .megabytes(1))
            } throws: { error in
                let error = error as? StashError
                return error?.code == .unsupportedVersion && error?.message.contains("schema 99") == true
                    && error?.message.contains(index.path) == true
            }
            #expect(try Data(contentsOf: index) == before)
            #expect(valueFilesBelow(dir.appendingPathComponent("data")).count == 5)
        }
    }
}
