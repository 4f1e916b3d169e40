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
    /// Hits served by a tier in front of the disk, by key: counted only, so that recording one
    /// costs a hash lookup and nothing else, and turned into accesses when the log is drained.
    private var frontTierHits: [String: Int] = [:]

    var count: Int { pending.count }
    var frontTierCount: Int { frontTierHits.count }

    mutating func record(_ key: Data, at date: Date, hits: Int = 1) {
        sequence += 1
        let sequence = sequence
        // One hash lookup: the entry is updated in place through the subscript's modify accessor.
        func update(_ access: inout Access) {
            access.hits += hits
            access.sequence = sequence
            access.date = date
        }
        update(&pending[key, default: Access(sequence: 0, date: date, hits: 0)])
    }

    mutating func recordFrontTierHit(_ key: String) {
        frontTierHits[key, default: 0] += 1
    }

    func lastAccess(of key: Data) -> Date? { pending[key]?.date }

    mutating func forget(_ key: Data) {
        pending[key] = nil
        if !frontTierHits.isEmpty { frontTierHits[String(decoding: key, as: UTF8.self)] = nil }
    }

    /// Removes and returns the pending accesses, least recent first; front-tier hits count as
    /// accesses at `date`, after the others.
    mutating func drain(at date: Date) -> [(key: Data, access: Access)] {
        for (key, hits) in frontTierHits { record(Data(key.utf8), at: date, hits: hits) }
        frontTierHits.removeAll(keepingCapacity: true)
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
        let now = configuration.clock()
        let accesses = accessLog.withLock { $0.drain(at: now) }
        guard !accesses.isEmpty else { return }
        try index.write { db in try applyAccesses(accesses, in: db) }
    }

    /// Writes recorded accesses inside a transaction that is already open, so that eviction
    /// decisions see every hit.
    func flushAccesses(in db: SQLiteConnection) throws {
        let now = configuration.clock()
        let accesses = accessLog.withLock { $0.drain(at: now) }
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
    /// or, to the default ``EvictionPolicy/adaptive``, requested once. ``Cache`` and
    /// `ResourceLoader` call it for their memory hits.
    ///
    /// Cheap enough for a memory hit's path: the hit is counted in memory (one hash lookup
    /// under a lock) and written with the next batch of accesses — before any eviction
    /// decision, with the disk's own hits, or on ``close()`` — as one access per key at that
    /// moment. Only when hits for more than ``frontTierHitLimit`` distinct keys are waiting is
    /// a batch written, on a background queue. A key that is not stored is ignored when the
    /// batch is written. ``statistics`` does not change.
    ///
    /// - Parameter key: The key, as stored; an empty key is ignored.
    /// - Complexity: O(*k*) in the key's length.
    public func recordHit(forKey key: String) {
        guard !key.isEmpty else { return }
        let isFull = accessLog.withLock { log in
            log.recordFrontTierHit(key)
            return log.frontTierCount >= Self.frontTierHitLimit
        }
        if isFull {
            DispatchQueue.global(qos: .utility).async(group: backgroundWork) { [self] in
                // Deliberately tolerated: a failed flush only makes eviction order less precise.
                try? flushAccesses()
            }
        }
    }

    /// How many distinct keys' front-tier hits may wait in memory before they are written.
    public static let frontTierHitLimit = 16_384
}
