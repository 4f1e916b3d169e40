import CSQLite
import CStashVFS
import Foundation

/// The `SQLITE_TRANSIENT` destructor: SQLite copies bound bytes before the call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// An SQLite result code with the message SQLite gave for it.
struct SQLiteError: Error, Sendable, CustomStringConvertible {
    var code: Int32
    var message: String
    var description: String { "SQLite error \(code): \(message)" }

    /// `true` for the codes that mean "locked by someone else, try again later".
    var isBusy: Bool { code & 0xff == SQLITE_BUSY || code & 0xff == SQLITE_LOCKED }
    /// `true` for the codes that mean the database file is damaged or not a database.
    var isCorruption: Bool { code & 0xff == SQLITE_CORRUPT || code & 0xff == SQLITE_NOTADB }
    /// `true` when the file or directory cannot be written.
    var isReadOnly: Bool { code & 0xff == SQLITE_READONLY || code & 0xff == SQLITE_CANTOPEN }
}

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe: its owner serialises access (see `DiskIndex`).
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    /// Statements of the hot paths, found by the address of their literal text rather than
    /// by hashing it.
    private var literalStatements: [UnsafeRawPointer: OpaquePointer] = [:]
    /// Statements of `statements`, by the address of the text they were last looked up with
    /// (see `prepared(_:)`); bounded, as dynamic strings add addresses.
    private var statementsByAddress: [UnsafeRawPointer: OpaquePointer] = [:]
    /// A number no other connection of this process has, for copies of index state that
    /// remember which connection they were checked on.
    let identity = SQLiteConnection.nextIdentity.withLock { next in
        next += 1
        return next
    }
    private static let nextIdentity = LockedValue(0)
    /// Write transactions begun on this connection by `DiskIndex.write`.
    var writeTransactions = 0
    /// Whether the current write transaction sees the index exactly as this connection's
    /// previous one left it.
    ///
    /// True when that one committed and no other connection committed since. Set by
    /// `DiskIndex.write`; state copied from the index in the previous transaction is then
    /// still current without reading it again.
    var followsOwnCommit = false
    /// Whether what this connection read or wrote in its write transaction `transaction` is
    /// still what the index holds: it is the current transaction, or the previous one and
    /// the current one follows its commit (`followsOwnCommit`).
    func isStillCurrent(fromWriteTransaction transaction: Int) -> Bool {
        transaction == writeTransactions || (transaction == writeTransactions - 1 && followsOwnCommit)
    }
    /// The index's logical clock (`totals.clock`) as this connection last read or wrote it, and
    /// in which write transaction (see `DiskCache.reserveRanks`).
    var knownClock: (transaction: Int, value: Int64)?
    /// The clock value this write transaction advanced the index's clock to, written to
    /// `totals.clock` just before it commits (see `DiskCache.reserveRanks`); `nil` when it took
    /// no rank.
    var pendingClock: Int64?
    /// The writer's page cache as last set (`DiskIndex.writerCacheKiB`).
    var writerCacheKiB = 2048
    /// SQLite's data version right after this connection's last commit, `nil` after a rollback.
    var dataVersionAfterCommit: UInt32?

    /// SQLite's count of changes to the database, by this connection or any other; read
    /// without a statement (`SQLITE_FCNTL_DATA_VERSION`).
    var dataVersion: UInt32? {
        var version: UInt32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else {
            return nil
        }
        return version
    }

    /// The WAL-index header under which this reader's open read transaction started, or `nil`
    /// when none is open (see `WALHeader`).
    var snapshot: WALHeader?
    /// SQLite's mapping of the WAL-index header, for a reader (see `mapWALHeader()`).
    var walHeader: UnsafeRawPointer?

    /// The name of Stash's VFS, or `nil` (SQLite's default) if it could not be registered.
    ///
    /// It is SQLite's default VFS, except that a connection keeps its memory map of the
    /// database across other connections' commits while the file's size is unchanged, so that
    /// a read after a commit does not fault every page in again (see `stash_vfs.c`). Registering
    /// it also turns SQLite's memory statistics off when Stash is the first SQLite user.
    static let vfs: String? = stash_vfs_register() == SQLITE_OK ? STASH_VFS_NAME : nil

    /// Opens the database at `path`, creating it unless `createsFile` is false; with `readOnlyURI`,
    /// `path` is a `file:` URI opened read-only (for a cache directory that cannot be written).
    init(path: String, busyTimeout: Duration, createsFile: Bool = true, readOnlyURI: Bool = false)
        throws(SQLiteError)
    {
        let flags =
            readOnlyURI
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | (createsFile ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, Self.vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        Self.setBusyTimeout(busyTimeout, of: db)
    }

    /// Makes the connection `db` wait up to `timeout` (whole milliseconds) for a lock another
    /// connection holds, and then fail with `SQLITE_BUSY`.
    static func setBusyTimeout(_ timeout: Duration, of db: OpaquePointer) {
        let millis = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(db, Int32(clamping: millis))
    }

    deinit { close() }

    func close() {
        snapshot = nil
        walHeader = nil
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        for statement in literalStatements.values { sqlite3_finalize(statement) }
        literalStatements.removeAll()
        statementsByAddress.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    var lastError: SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message)
        }
    }

    /// Runs one statement without bindings or rows (`BEGIN IMMEDIATE`, `COMMIT`), prepared
    /// once: a transaction's brackets cost no parsing.
    func executeCached(_ sql: StaticString) throws(SQLiteError) {
        let statement = try prepared(literal: sql)
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        if rc != SQLITE_DONE && rc != SQLITE_ROW { throw lastError }
    }

    /// Runs `sql` with `bindings` and calls `row` for each result row.
    func query(
        _ sql: String, _ bindings: [SQLiteValue] = [], row: (SQLiteRow) throws -> Void = { _ in }
    ) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in bindings.enumerated() {
            try bind(value, at: Int32(index + 1), in: statement)
        }
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                try row(SQLiteRow(statement: statement))
            } else if rc == SQLITE_DONE {
                return
            } else {
                throw lastError
            }
        }
    }

    /// Runs `sql` and returns the first row mapped by `map`, or `nil` when there are no rows.
    func first<T>(_ sql: String, _ bindings: [SQLiteValue] = [], map: (SQLiteRow) throws -> T) throws -> T? {
        var result: T?
        try query(sql, bindings) { row in
            if result == nil { result = try map(row) }
        }
        return result
    }

    /// The id of the row the connection's last successful `INSERT` added.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs a statement and returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws -> Int {
        try query(sql, bindings)
        return Int(sqlite3_changes(handle))
    }

    /// Runs the statement `sql` with the bytes of `key` bound to `?1` and maps its first row.
    ///
    /// The hot path of a read: no allocation for the bindings, no copy of the key (SQLite reads
    /// it in place), and the statement is found by its literal's address.
    func first<T>(_ sql: StaticString, bindingKey key: String, map: (SQLiteRow) throws -> T) throws -> T? {
        let statement = try prepared(literal: sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var key = key
        return try key.withUTF8 { bytes in
            let rc = sqlite3_bind_blob64(
                statement, 1, bytes.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(bitPattern: 1),
                UInt64(bytes.count), nil)
            if rc != SQLITE_OK { throw lastError }
            let step = sqlite3_step(statement)
            if step == SQLITE_ROW { return try map(SQLiteRow(statement: statement)) }
            if step == SQLITE_DONE { return nil }
            throw lastError
        }
    }

    /// Runs the statement `sql` with `value` bound to `?1` and maps its first row; found by its
    /// literal's address, like `first(_:bindingKey:map:)`.
    func first<T>(_ sql: StaticString, bindingInteger value: Int64, map: (SQLiteRow) throws -> T) throws -> T? {
        let statement = try prepared(literal: sql)
        defer { sqlite3_reset(statement) }
        let rc = sqlite3_bind_int64(statement, 1, value)
        if rc != SQLITE_OK { throw lastError }
        let step = sqlite3_step(statement)
        if step == SQLITE_ROW { return try map(SQLiteRow(statement: statement)) }
        if step == SQLITE_DONE { return nil }
        throw lastError
    }

    private func prepared(literal sql: StaticString) throws(SQLiteError) -> OpaquePointer {
        let address = UnsafeRawPointer(sql.utf8Start)
        if let statement = literalStatements[address] { return statement }
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v3(
                handle, address.assumingMemoryBound(to: CChar.self), Int32(sql.utf8CodeUnitCount),
                UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw lastError }
        literalStatements[address] = statement
        return statement
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        // Most statements are string literals, whose bytes never move: look them up by address
        // first, and confirm the text (a freed dynamic string's address may be reused). Hashing
        // the text instead took 3 % of the instructions of a 1 KiB store (callgrind). Strings of
        // up to 15 bytes are stored inline, at no stable address: they go by text.
        let found = sql.utf8.withContiguousStorageIfAvailable { bytes -> (UnsafeRawPointer, OpaquePointer?)? in
            guard bytes.count > 15, let base = bytes.baseAddress else { return nil }
            let address = UnsafeRawPointer(base)
            guard let statement = statementsByAddress[address], let text = sqlite3_sql(statement),
                strlen(text) == bytes.count, memcmp(text, address, bytes.count) == 0
            else { return (address, nil) }
            return (address, statement)
        }
        if let (_, statement) = found ?? nil, let statement { return statement }
        let statement = try preparedByText(sql)
        if let (address, _) = found ?? nil {
            if statementsByAddress.count >= 512 { statementsByAddress.removeAll(keepingCapacity: true) }
            statementsByAddress[address] = statement
        }
        return statement
    }

    private func preparedByText(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw lastError }
        statements[sql] = statement
        return statement
    }

    private func bind(_ value: SQLiteValue, at index: Int32, in statement: OpaquePointer) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(statement, index)
        case .integer(let v):
            rc = sqlite3_bind_int64(statement, index, v)
        case .real(let v):
            rc = sqlite3_bind_double(statement, index, v)
        case .text(let v):
            rc = sqlite3_bind_text(statement, index, v, -1, transient)
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { buffer in
                // A zero-length blob must still bind as a blob, not NULL.
                sqlite3_bind_blob64(
                    statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(buffer.count),
                    transient)
            }
        }
        if rc != SQLITE_OK { throw lastError }
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
    static func optionalText(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
    static func optionalReal(_ value: Double?) -> SQLiteValue { value.map(SQLiteValue.real) ?? .null }
}

/// The current row of a statement; valid only inside the `row` closure of `query`.
///
/// Its accessors copy what SQLite's column pointers show (`sqlite3_column_text`/`_blob` are
/// valid only until the statement steps, resets or converts the column), or compare it in place.
struct SQLiteRow {
    let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Whether the column holds exactly `bytes` (compared in place, without a copy).
    func blob(_ column: Int32, equals bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let pointer = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count == bytes.count else { return false }
        guard count > 0, let pointer, let base = bytes.baseAddress else { return count == 0 }
        return memcmp(pointer, base, count) == 0
    }

    /// A copy of the column's bytes: SQLite's pointer is valid only until the next step, reset
    /// or type conversion of this column, so it never leaves this row.
    func blob(_ column: Int32) -> Data? {
        if isNull(column) { return nil }
        // sqlite3_column_blob before sqlite3_column_bytes, SQLite's documented order: the size
        // is then that of the bytes the pointer shows, whatever conversion the first call made.
        guard let pointer = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(statement, column)))
    }
}
