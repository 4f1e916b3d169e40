import Foundation
import Testing

@testable import Stash

/// The connection's statement cache finds a statement by the address of its text: a string
/// built anew at an address another text used before must still get its own statement.
@Suite struct SQLiteStatementCacheTests {
    @Test func aDynamicStatementAtAReusedAddressGetsItsOwnStatement() throws {
        try withTemporaryDirectory { dir in
            let db = try SQLiteConnection(path: dir.appendingPathComponent("t.sqlite").path, busyTimeout: .seconds(1))
            defer { db.close() }
            // Two texts, built anew on every turn: the cache keeps the first string of each, and
            // later copies are freed after use, so the allocator tends to hand the next string
            // (the other text) the same address. All are longer than an inline (small) string.
            var addresses = Set<Int>()
            for i in 0..<200 {
                let sql = "SELECT \(i % 2) AS value, 'a text long enough to live on the heap'"
                _ = sql.utf8.withContiguousStorageIfAvailable { addresses.insert(Int(bitPattern: $0.baseAddress)) }
                #expect(try db.first(sql) { $0.int(0) } == i % 2, "turn \(i)")
            }
            // The test means something only if some address came back; AddressSanitizer
            // quarantines freed memory, so none does under it (the answers are still checked).
            if !BuildProducts.isSanitized { #expect(addresses.count < 200) }
        }
    }

    @Test func literalStatementsAreFoundAgainAndShortOnesByText() throws {
        try withTemporaryDirectory { dir in
            let db = try SQLiteConnection(path: dir.appendingPathComponent("t.sqlite").path, busyTimeout: .seconds(1))
            defer { db.close() }
            try db.execute("CREATE TABLE t (x INTEGER)")
            for i in 0..<50 {
                try db.run("INSERT INTO t (x) VALUES (?1)", [.int(i)])
                #expect(try db.first("SELECT 1") { $0.int(0) } == 1)  // an inline string
            }
            #expect(try db.first("SELECT count(*), sum(x) FROM t") { [$0.int(0), $0.int(1)] } == [50, 1225])
        }
    }
}
