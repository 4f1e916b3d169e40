import Foundation
import Testing

@testable import Stash

/// What the writer connection remembers between its own transactions (the policy clock, the
/// frequency sketch's copy) instead of reading it again, and when it must not: another
/// connection committed, or its own transaction rolled back.
@Suite struct WriterStateTests {
    struct Rollback: Error {}

    static func open(_ dir: URL) throws -> DiskCache {
        // The commit-per-store mode: these tests follow the writer connection from commit to commit.
        try DiskCache(directory: dir, configuration: .init(sizeLimit: .megabytes(50), writeMode: .immediate))
    }

    @Test func aWriteFollowsItsOwnCommitOnlyWhenNothingElseChangedTheIndexSince() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            let other = try Self.open(dir)
            defer {
                cache.close()
                other.close()
            }
            try cache.store(Data("a".utf8), forKey: "a")
            #expect(try cache.index.write { $0.followsOwnCommit })
            #expect(try cache.index.write { $0.followsOwnCommit })
            // Another connection's commit.
            try other.store(Data("b".utf8), forKey: "b")
            #expect(try cache.index.write { $0.followsOwnCommit } == false)
            #expect(try cache.index.write { $0.followsOwnCommit })
            // A transaction of its own that rolled back.
            #expect(throws: Rollback.self) {
                try cache.index.write { db in
                    try db.run("UPDATE totals SET hand = hand + 1 WHERE id = 1")
                    throw Rollback()
                }
            }
            #expect(try cache.index.write { $0.followsOwnCommit } == false)
            #expect(try cache.index.write { $0.followsOwnCommit })
        }
    }

    @Test func ranksStayUniqueWhenTwoConnectionsStoreInTurn() throws {
        try withTemporaryDirectory { dir in
            let first = try Self.open(dir)
            let second = try Self.open(dir)
            defer {
                first.close()
                second.close()
            }
            // Each store takes a rank from the shared clock; a connection trusting the clock
            // it last wrote after the other one advanced it would hand out the same rank twice.
            for i in 0..<40 {
                try (i.isMultiple(of: 2) ? first : second).store(pattern(100, seed: UInt64(i)), forKey: "k\(i)")
            }
            let ranks = try first.index.read { db in
                var ranks: [Int64] = []
                try db.query("SELECT rank FROM states") { ranks.append($0.int64(0)) }
                return ranks
            }
            #expect(ranks.count == 40)
            #expect(Set(ranks).count == 40)
            let clock = try first.index.read { db in
                try db.first("SELECT clock FROM totals WHERE id = 1") { $0.int64(0) }
            }
            #expect(ranks.allSatisfy { $0 <= clock ?? 0 })
        }
    }

    @Test func theSketchIsReadAgainAfterAnotherConnectionWroteIt() throws {
        try withTemporaryDirectory { dir in
            let cache = try Self.open(dir)
            let other = try Self.open(dir)
            defer { cache.close() }
            try cache.store(Data("a".utf8), forKey: "a")
            try cache.store(Data("b".utf8), forKey: "b")
            // The other connection writes the sketch with a generation of its own.
            try other.store(Data("c".utf8), forKey: "c")
            other.close()
            func storedGeneration() throws -> Int64? {
                try cache.index.read { db in
                    try db.first("SELECT data FROM sketch WHERE chunk = -1") { row -> Int64? in
                        guard let data = row.blob(0), data.count >= 8 else { return nil }
                        return Int64(
                            bitPattern: data.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }.littleEndian)
                    } ?? nil
                }
            }
            let written = try storedGeneration()
            #expect(written != nil)
            #expect(cache.sketchSlot.withLock { $0.generation } != written)
            // The next write must see that generation rather than trust its copy.
            try cache.store(Data("d".utf8), forKey: "d")
            let now = try storedGeneration()
            #expect(cache.sketchSlot.withLock { $0.generation } == now)
        }
    }
}
