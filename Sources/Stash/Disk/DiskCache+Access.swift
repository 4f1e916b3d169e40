import Foundation

/// Reads recorded in memory and written to the index in batches, so that a hit is not a
/// disk write.
struct AccessLog {
    struct Access {
        var sequence: Int
        var date: Date
        var hits: Int
    }

    private var pending: [Data: Access] = [:]
    private var sequence = 0

    var count: Int { pending.count }

    mutating func record(_ key: Data, at date: Date) {
        sequence += 1
        let sequence = sequence
        // One hash lookup: the entry is updated in place through the subscript's modify accessor.
        func update(_ access: inout Access) {
            access.hits += 1
            access.sequence = sequence
            access.date = date
        }
        update(&pending[key, default: Access(sequence: 0, date: date, hits: 0)])
    }

    func lastAccess(of key: Data) -> Date? { pending[key]?.date }

    mutating func forget(_ key: Data) { pending[key] = nil }

    /// Removes and returns the pending accesses, least recent first.
    mutating func drain() -> [(key: Data, access: Access)] {
        defer { pending.removeAll(keepingCapacity: true) }
        return pending.sorted { $0.value.sequence < $1.value.sequence }.map { ($0.key, $0.value) }
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

    private func applyAccesses(_ accesses: [(key: Data, access: AccessLog.Access)], in db: SQLiteConnection) throws {
        guard !accesses.isEmpty else { return }
        let policy = configuration.evictionPolicy
        var policyIndex = SQLiteEvictionIndex(updatingStatesIn: db, cache: self)
        for (key, access) in accesses {
            let found = try db.first("SELECT id, queue, rank, frequency FROM entries WHERE key = ?1", [.blob(key)]) {
                (id: $0.int64(0), state: PolicyState(queue: $0.int(1), rank: $0.int64(2), frequency: $0.int(3)))
            }
            guard let found else { continue }
            let state =
                try policy.stateAfterHits(
                    found.state, hits: access.hits, fingerprint: Self.fingerprint(key), in: &policyIndex) ?? found.state
            if policy.usesFrequencySketch { noteSketchRequests(access.hits) }
            try db.run(
                "UPDATE entries SET accessed = ?1, queue = ?2, rank = ?3, frequency = ?4 WHERE id = ?5",
                [
                    .real(access.date.timeIntervalSince1970), .int(state.queue), .integer(state.rank),
                    .int(state.frequency), .integer(found.id),
                ])
        }
        if policy.usesFrequencySketch { try saveSketch(in: db, force: false) }
    }
}

extension DiskCache {
    /// Counts a read of `key` that a tier in front of this cache served (a memory cache holding
    /// the same value), so that eviction sees how often the entry is really requested.
    ///
    /// Without it, an entry read often from memory looks unused on disk: least recently used,
    /// or, to the default ``EvictionPolicy/tinyLFU``, requested once. ``Cache`` and
    /// `ResourceLoader` call it for their memory hits.
    ///
    /// No disk I/O on the caller's thread: the hit joins the in-memory batch that the hits of
    /// ``data(forKey:)`` go to, and a full batch is written on a background queue. A key that
    /// is not stored is ignored when the batch is written. ``statistics`` does not change.
    ///
    /// - Parameter key: The key, as stored; an empty key is ignored.
    /// - Complexity: O(*k*) amortised in the key's length.
    public func recordHit(forKey key: String) {
        guard !key.isEmpty else { return }
        let isFull = accessLog.withLock { log in
            log.record(Data(key.utf8), at: configuration.clock())
            return log.count >= configuration.accessFlushBatch
        }
        if isFull {
            DispatchQueue.global(qos: .utility).async(group: backgroundWork) { [self] in
                // Deliberately tolerated: a failed flush only makes eviction order less precise.
                try? flushAccesses()
            }
        }
    }
}
