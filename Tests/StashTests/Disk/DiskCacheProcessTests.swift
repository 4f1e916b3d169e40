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

    @Test func twoProcessesShareOneDirectoryWithoutErrorsOrCorruption() throws {
        try withTemporaryDirectory { dir in
            let first = try Worker.start(["mixed", dir.path, "11", "3000"])
            let second = try Worker.start(["mixed", dir.path, "22", "3000"])
            var outputs: [String] = []
            for (process, handle) in [first, second] {
                let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
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
                let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
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
