import Foundation
import Testing

@testable import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Crash safety and multi-process use, with real child processes.
@Suite struct DiskCacheProcessTests {
    /// Checks what a killed writer left: every served value complete and correct, totals equal
    /// to the sum of the entries, and nothing `verify` cannot repair.
    private func expectConsistent(_ dir: URL, round: Int) throws {
        let check = try Worker.run(["check", dir.path])
        #expect(check.status == 0, "round \(round): \(check.output)")
        #expect(check.output.hasSuffix("broken=0\n"), "round \(round): \(check.output)")

        let cache = try DiskCache(directory: dir, configuration: .init(reclaimsOrphansOnOpen: false))
        var sum = 0
        var count = 0
        for key in try cache.allKeys {
            let attributes = try #require(try cache.attributes(forKey: key))
            if let value = try cache.data(forKey: key) { #expect(value.count == attributes.size) }
            sum += attributes.size
            count += 1
        }
        #expect(try cache.totalSize.bytes == sum, "round \(round)")
        #expect(try cache.totalCount == count, "round \(round)")
        #expect(sum <= 3_000_000, "round \(round)")
        let report = try cache.verify(repair: true)
        #expect(report.damagedEntries.isEmpty, "round \(round): \(report)")
        #expect(report.indexProblems.isEmpty, "round \(round): \(report)")
        #expect(!report.totalsMismatch, "round \(round): \(report)")
        #expect(try cache.verify().isHealthy, "round \(round)")
        cache.close()
    }

    @Test func killedWritersNeverLeaveTornValuesOrWrongTotals() throws {
        try withTemporaryDirectory { dir in
            var generator = SplitMix64(seed: 2024)
            for round in 0..<24 {
                let (process, output) = try Worker.start(["write-loop", dir.path, "\(round + 1)"])
                let progressed = Worker.waitForLines(
                    output, prefix: "progress", count: Int.random(in: 1...12, using: &generator))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                #expect(progressed, "round \(round): the worker stopped on its own")
                #expect(process.terminationReason == .uncaughtSignal, "round \(round)")
                try expectConsistent(dir, round: round)
            }
        }
    }

    /// A writer that dies while Stash's VFS writes a commit's gathered WAL frames, before any
    /// byte, halfway, or one byte short, loses at most that commit: every store and removal it
    /// reported done is in the reopened cache, the one in flight either happened or not, and
    /// nothing served is torn.
    @Test func aWriterDyingInTheMiddleOfAGatheredWALWriteLosesAtMostThatCommit() throws {
        try withTemporaryDirectory { dir in
            var round = 0
            for flush in [3, 12, 31, 64, 97] {
                for tear in ["0", "0.5", "0.9999"] {
                    round += 1
                    let run = try Worker.run(["wal-crash", dir.path, "\(round)", "\(flush)", tear])
                    #expect(run.status == 3, "round \(round): \(run.output.suffix(300))")
                    // What the worker reported done, and the operation it had begun.
                    var done: [String: UInt64?] = [:]
                    var begun: (key: String, seed: UInt64?)?
                    for line in run.output.split(separator: "\n") {
                        let words = line.split(separator: " ").map(String.init)
                        switch words.first {
                        case "storing": begun = (words[1], UInt64(words[2]))
                        case "removing": begun = (words[1], nil)
                        case "stored", "removed":
                            done[words[1]] = words.count > 2 ? UInt64(words[2]) : UInt64?.none
                            begun = nil
                        default: break
                        }
                    }
                    #expect(!done.isEmpty || flush <= 3, "round \(round): nothing was done")
                    let cache = try DiskCache(directory: dir, configuration: .init(reclaimsOrphansOnOpen: false))
                    for (key, seed) in done {
                        let value = try cache.data(forKey: key)
                        let found = value.map { bytes in
                            bytes.prefix(8).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
                        }
                        var allowed: [UInt64?] = [seed]
                        if let begun, begun.key == key { allowed.append(begun.seed) }
                        #expect(
                            allowed.contains(found),
                            "round \(round): \(key) holds \(String(describing: found)), expected \(allowed)")
                    }
                    cache.close()
                    try expectConsistent(dir, round: round)
                }
            }
        }
    }

    @Test func twoProcessesShareOneDirectoryWithoutErrorsOrCorruption() throws {
        try withTemporaryDirectory { dir in
            let first = try Worker.start(["mixed", dir.path, "11", "3000"])
            let second = try Worker.start(["mixed", dir.path, "22", "3000"])
            var outputs: [String] = []
            for (process, handle) in [first, second] {
                let text = String(decoding: Worker.readToEnd(handle), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "\(text)")
                #expect(text.contains("corrupt=0"), "\(text)")
                outputs.append(text)
            }
            // Both really worked: each stored and read values that the other may have replaced.
            for text in outputs {
                let stores = text.split(separator: " ").first { $0.hasPrefix("stores=") }.flatMap {
                    Int($0.dropFirst(7))
                }
                #expect((stores ?? 0) > 50, "\(text)")
            }
            try expectConsistent(dir, round: 0)
        }
    }

    /// An app and its extension may both open a new cache at the same moment.
    ///
    /// SQLite then reports "database is locked" at once, without waiting through the busy handler, to a
    /// process whose first statements meet the other switching the new index to WAL; before
    /// the open retried, 14 of 30 simultaneous two-process starts failed so.
    @Test func processesCreatingACacheAtTheSameMomentAllSucceed() throws {
        try withTemporaryDirectory { parent in
            let start = String(Date().timeIntervalSince1970 + 0.5)
            let workers = try (0..<2).map { _ in try Worker.start(["open-rounds", parent.path, "40", start]) }
            for (process, handle) in workers {
                let text = String(decoding: Worker.readToEnd(handle), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "\(text)")
                #expect(text == "ok\n", "\(text)")
            }
        }
    }

    @Test func readOnlyDirectoryGivesAClearError() throws {
        try withTemporaryDirectory { parent in
            let dir = parent.appendingPathComponent("locked")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: parent.path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path) }
            // Root ignores permissions, so run the attempt as an unprivileged user.
            let prefix = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
            if getuid() == 0 {
                let executable = try Worker.executable
                // The worker must be reachable by that user too.
                try #require(access(executable.path, R_OK | X_OK) == 0)
            }
            let result = try Worker.run(["open", dir.path], prefix: prefix)
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("error=readOnly"), "\(result.output)")
            #expect(result.output.contains(dir.path), "\(result.output)")
        }
    }
}
