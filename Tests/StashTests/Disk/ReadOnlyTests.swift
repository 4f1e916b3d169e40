import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#endif

/// A directory that cannot be written opens read-only: reads, listing and verify work, writes
/// throw `.readOnly` naming the directory, and nothing in the directory changes.
@Suite struct ReadOnlyTests {
    private func populate(_ dir: URL, clock: TestClock) throws {
        let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(1), clock: clock.function))
        try cache.store(pattern(100, seed: 1), forKey: "inline")
        try cache.store(pattern(100_000, seed: 2), forKey: "file")
        try cache.store(pattern(10, seed: 3), forKey: "pinned", pinned: true)
        try cache.store(pattern(50, seed: 4), forKey: "expiring", timeToLive: .seconds(10))
        cache.close()
    }

    /// Every file below `dir` with its size and modification time.
    private func snapshot(_ dir: URL) throws -> [String: [Double]] {
        var result: [String: [Double]] = [:]
        for path in filesBelow(dir) {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(path).path)
            result[path] = [
                Double((attributes[.size] as? Int) ?? -1),
                (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1,
            ]
        }
        return result
    }

    private func isReadOnlyError(_ error: any Error, _ dir: URL) -> Bool {
        let error = error as? StashError
        return error?.code == .readOnly && error?.message.contains(dir.path) == true
    }

    @Test func readsWorkAndEveryWriteThrowsReadOnlyNamingTheDirectory() throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            try populate(dir, clock: clock)
            let before = try snapshot(dir)
            clock.advance(by: 60)
            var configuration = DiskCache.Configuration(sizeLimit: .megabytes(1), clock: clock.function)
            configuration.opensReadOnly = true
            let cache = try DiskCache(directory: dir, configuration: configuration)
            #expect(cache.isReadOnly)
            #expect(try cache.data(forKey: "file") == pattern(100_000, seed: 2))
            #expect(try cache.data(forKey: "inline") == pattern(100, seed: 1))
            #expect(try cache.data(forKey: "pinned") == pattern(10, seed: 3))
            // Expired: a miss, but a read-only cache does not remove it.
            #expect(try cache.data(forKey: "expiring") == nil)
            #expect(try cache.totalCount == 4)
            #expect(try Set(cache.allKeys) == ["inline", "file", "pinned", "expiring"])
            #expect(try cache.verify().isHealthy)
            #expect { try cache.store(Data("x".utf8), forKey: "new") } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.store(pattern(100_000, seed: 5), forKey: "new") } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.removeData(forKey: "file") } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.pin("file") } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.trim(toSize: .zero) } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.removeAll() } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.verify(repair: true) } throws: { isReadOnlyError($0, dir) }
            #expect { try cache.rebuildIndex() } throws: { isReadOnlyError($0, dir) }
            cache.close()
            #expect(try snapshot(dir) == before)
        }
    }

    /// `chmod` as a user whom the permissions bind (tests run as root, so through `setpriv`).
    @Test func anUnwritableDirectoryOpensReadOnlyForItsReaders() throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("shared")
            try populate(dir, clock: TestClock())
            for path in [""] + filesBelow(dir) + ["data", "tmp"] + directoriesBelow(dir.appendingPathComponent("data"))
            {
                let url = path.isEmpty ? dir : dir.appendingPathComponent(path)
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
                try FileManager.default.setAttributes(
                    [.posixPermissions: isDirectory.boolValue ? 0o555 : 0o444], ofItemAtPath: url.path)
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: parent.path)
            defer { _ = try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path) }
            let before = try snapshot(dir)
            let prefix = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
            if getuid() == 0 { try #require(access(try Worker.executable.path, R_OK | X_OK) == 0) }
            let result = try Worker.run(["read-only", dir.path], prefix: prefix)
            #expect(result.status == 0)
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(lines.first == "readOnly=true count=4", "\(result.output)")
            #expect(lines.contains("file \(fnv1a(pattern(100_000, seed: 2)))"), "\(result.output)")
            #expect(lines.contains("pinned \(fnv1a(pattern(10, seed: 3)))"), "\(result.output)")
            #expect(lines.contains("healthy=true"), "\(result.output)")
            let store = try #require(lines.first { $0.hasPrefix("store=") })
            #expect(store.hasPrefix("store=readOnly"), "\(store)")
            #expect(store.contains(dir.path), "\(store)")
            #expect(try snapshot(dir) == before)
        }
    }
}

extension ReadOnlyTests {
    /// Issue 30, item 9: value files and their directories honour the umask, as the index's
    /// files do, so that a cache whose owner lets others into its directory is readable by
    /// them; a file they may not read is reported as a permission error.
    // Linux only: reads the umask from /proc/self/status (reading it elsewhere means setting it, which
    // races with the tests that run in parallel) and acts as another user with setpriv(1).
    #if os(Linux)
        @Test func aCacheItsOwnerOpensToOthersIsReadableAndAForbiddenFileSaysPermissionDenied() throws {
            try withTemporaryDirectory { parent in
                let dir = parent.appendingPathComponent("shared")
                try populate(dir, clock: TestClock())
                // The process's umask, read without changing it (tests run in parallel).
                let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
                let umaskLine = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
                let mask = try #require(Int(umaskLine.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8))
                let file = try #require(valueFilesBelow(dir.appendingPathComponent("data")).first)
                let mode =
                    try FileManager.default.attributesOfItem(
                        atPath: dir.appendingPathComponent("data/" + file).path)[.posixPermissions] as? Int
                #expect(mode == 0o666 & ~mask)
                // Only the cache's own directory is opened to others (it is created owner-only).
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: parent.path)
                guard getuid() == 0, mask & 0o044 == 0 else { return }  // another user needs root to act as
                let prefix = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                try #require(access(try Worker.executable.path, R_OK | X_OK) == 0)
                let result = try Worker.run(["read-only", dir.path], prefix: prefix)
                let lines = result.output.split(separator: "\n").map(String.init)
                #expect(lines.first == "readOnly=true count=4", "\(result.output)")
                #expect(lines.contains("file \(fnv1a(pattern(100_000, seed: 2)))"), "\(result.output)")
                #expect(lines.contains("pinned \(fnv1a(pattern(10, seed: 3)))"), "\(result.output)")

                try FileManager.default.setAttributes(
                    [.posixPermissions: 0o600], ofItemAtPath: dir.appendingPathComponent("data/" + file).path)
                let denied = try Worker.run(["read-only", dir.path], prefix: prefix)
                let error = try #require(denied.output.split(separator: "\n").first { $0.hasPrefix("error=") })
                #expect(error.contains("permission denied"), "\(denied.output)")
                #expect(!error.contains("not writable"), "\(denied.output)")
            }
        }
    #endif
}

/// FNV-1a, 64 bits, as the worker computes it.
func fnv1a(_ data: Data) -> UInt64 {
    data.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}

/// Every directory below `url`, as paths relative to its parent's parent (`data/a`, `data/a/b`).
func directoriesBelow(_ url: URL) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return [] }
    var directories: [String] = []
    while let path = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.appendingPathComponent(path).path, isDirectory: &isDirectory),
            isDirectory.boolValue
        {
            directories.append(url.lastPathComponent + "/" + path)
        }
    }
    return directories
}
