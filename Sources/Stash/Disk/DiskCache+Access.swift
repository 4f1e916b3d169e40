import Foundation

/// Reads recorded in memory and written to the index in batches, so that a hit is not a
/// disk write.
struct AccessLog {
    private var pending: [Data: (sequence: Int, date: Date)] = [:]
    private var sequence = 0

    var count: Int { pending.count }

    mutating func record(_ key: Data, at date: Date) {
        sequence += 1
        pending[key] = (sequence, date)
    }

    func lastAccess(of key: Data) -> Date? { pending[key]?.date }

    mutating func forget(_ key: Data) { pending[key] = nil }

    /// Removes and returns the pending accesses, oldest first.
    mutating func drain() -> [(key: Data, date: Date)] {
        defer { pending.removeAll(keepingCapacity: true) }
        return pending.sorted { $0.value.sequence < $1.value.sequence }.map { ($0.key, $0.value.date) }
    }
}

extension DiskCache {
    /// Records a hit; writes the batch when it is full.
    func recordAccess(_ key: Data, at date: Date) {
        let isFull = accessLog.withLock { log in
            log.record(key, at: date)
            return log.count >= configuration.accessFlushBatch
        }
        if isFull {
            // Deliberately tolerated: a failed flush only makes eviction order less precise.
            try? flushAccesses()
        }
    }

    /// Writes all recorded accesses to the index in one transaction.
    func flushAccesses() throws {
        let accesses = accessLog.withLock { $0.drain() }
        guard !accesses.isEmpty else { return }
        try index.write { db in try applyAccesses(accesses, in: db) }
    }

    /// Writes recorded accesses inside a transaction that is already open, so that eviction
    /// decisions see every hit.
    func flushAccesses(in db: SQLiteConnection) throws {
        let accesses = accessLog.withLock { $0.drain() }
        try applyAccesses(accesses, in: db)
    }

    private func applyAccesses(_ accesses: [(key: Data, date: Date)], in db: SQLiteConnection) throws {
        guard !accesses.isEmpty else { return }
        let promotes = configuration.evictionPolicy.promotesOnAccess
        var rank = try reserveRanks(accesses.count, in: db) - Int64(accesses.count)
        for access in accesses {
            rank += 1
            try db.run(
                "UPDATE entries SET accessed = ?1, rank = CASE WHEN ?2 THEN ?3 ELSE rank END WHERE key = ?4",
                [
                    .real(access.date.timeIntervalSince1970), .integer(promotes ? 1 : 0), .integer(rank),
                    .blob(access.key),
                ]
            )
        }
    }

    /// Advances the index's logical clock by `n` and returns its new value; ranks are unique
    /// across every process sharing the directory.
    func reserveRanks(_ n: Int, in db: SQLiteConnection) throws -> Int64 {
        try db.first("UPDATE totals SET clock = clock + ?1 WHERE id = 1 RETURNING clock", [.int(n)]) { $0.int64(0) }
            ?? 0
    }
}
