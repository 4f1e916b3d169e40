import Foundation

extension DiskCache {
    /// Records a hit in memory, never writing the index.
    ///
    /// A full batch, or the first hit after the log was drained, schedules a write on the
    /// cache's background queue.
    func recordAccess(_ key: Data, at date: Date) {
        // A read-only cache keeps no access times: nothing could ever write them.
        if index.isReadOnly { return }
        let batch = configuration.accessFlushBatch
        let schedule = accessLog.withLock { log -> AccessFlushSchedule? in
            log.record(key, at: date)
            switch log.schedule {
            case .immediate:
                return nil
            case .delayed:
                guard log.count >= batch else { return nil }
                log.schedule = .immediate
                return .immediate
            case .idle:
                log.schedule = log.count >= batch ? .immediate : .delayed
                return log.schedule
            }
        }
        guard let schedule else { return }
        let delay = schedule == .immediate ? .zero : configuration.accessFlushDelay
        scheduleAccessFlush(after: delay)
    }

    /// Writes the recorded accesses on the background queue after `delay`.
    ///
    /// The job holds the cache weakly: a cache that is deallocated meanwhile has already
    /// written its accesses in `deinit`.
    func scheduleAccessFlush(after delay: Duration) {
        let job: @Sendable () -> Void = { [weak self] in self?.runScheduledAccessFlush() }
        if delay <= .zero {
            accessFlushQueue.async(execute: job)
        } else {
            accessFlushQueue.asyncAfter(deadline: .now() + delay.seconds, execute: job)
        }
    }

    private func runScheduledAccessFlush() {
        let hooks = accessFlushHooks.withLock { $0 }
        guard accessLog.withLock({ $0.count + $0.frontTierCount > 0 }) else {
            hooks.didWrite?(0)
            return
        }
        hooks.willWrite?()
        // Staged changes commit first (a little before the writer's delay is up): the reads
        // that follow one are written after it, in request order.
        commitStagedNow()
        // Deliberately tolerated: a failed write only makes eviction order less precise, and
        // the accesses of a busy index are dropped rather than retried forever.
        let written = (try? flushAccesses()) ?? 0
        hooks.didWrite?(written)
        // Reads that follow a change staged meanwhile were put back: they are written after
        // it, by the writer's commit or by a later flush.
        let isLeft = accessLog.withLock { log -> Bool in
            guard log.count + log.frontTierCount > 0, log.schedule == .idle else { return false }
            log.schedule = .delayed
            return true
        }
        if isLeft { scheduleAccessFlush(after: configuration.accessFlushDelay) }
    }

    /// Writes all recorded accesses to the index in one transaction, now, on this thread (those
    /// that follow a staged change not committed yet stay for its commit).
    ///
    /// The log is drained inside the write transaction, so that an eviction in another
    /// transaction of this process sees every hit either still in memory or already written.
    ///
    /// - Returns: The number of accesses written.
    @discardableResult
    func flushAccesses() throws -> Int {
        guard accessLog.withLock({ $0.count + $0.frontTierCount > 0 }) else { return 0 }
        return try index.write { db in try flushAccesses(in: db) }
    }

    /// Writes recorded accesses inside a transaction that is already open, so that eviction
    /// decisions see every hit: those recorded before the oldest change that is staged or being
    /// committed, which the others follow.
    @discardableResult
    func flushAccesses(in db: SQLiteConnection) throws -> Int {
        let accesses = takeAccesses { staging.withLock { $0.firstUncommittedChange } }
        try applyAccesses(accesses, in: db)
        return accesses.count
    }

    /// Drains the log and returns, least recent first, the accesses recorded before the change
    /// numbered `cutoff()` (all when it is `nil`); the others are put back.
    ///
    /// The cutoff is read after the drain: a change numbered before any drained access was
    /// staged by then (``stage(_:forKey:)`` numbers and queues a change under the staging
    /// area's lock), so no access is applied before a change it follows.
    func takeAccesses(before cutoff: () -> Int?) -> [(key: Data, access: AccessLog.Access)] {
        guard accessLog.withLock({ $0.count + $0.frontTierCount > 0 }) else { return [] }
        let now = configuration.clock()
        let drained = accessLog.withLock { $0.drain(at: now) }
        let (due, later) = drained.inOrder(before: cutoff() ?? .max)
        if !later.isEmpty { accessLog.withLock { $0.putBack(later) } }
        return due
    }

    /// How stale an entry's recorded last access may be before a read that changes nothing
    /// else rewrites it.
    ///
    /// A read that leaves the policy's state alone (FIFO, or an entry whose hit counter is
    /// already at its cap) then costs no write at all: at a million entries each written read
    /// dirties a page of its own, and a background write per read measurably slowed the reads.
    static let accessTimeResolution: TimeInterval = 60

    func applyAccesses(_ accesses: [(key: Data, access: AccessLog.Access)], in db: SQLiteConnection) throws {
        guard !accesses.isEmpty else { return }
        let policy = configuration.evictionPolicy
        var policyIndex = SQLiteEvictionIndex(updatingStatesIn: db, cache: self, rankBlock: accesses.count)
        let displaced = try Self.hasDisplacedEntries(db)
        let marks = try persistedStateMarks(db)
        // Moved out (not copied) for the batch, and back once it is written.
        var known = persistedStates.withLock { states in
            states.validate(marks)
            defer { states = PersistedStates() }
            return states
        }
        typealias Found = (id: Int64, seq: Int64, state: PolicyState, accessed: Double)
        func found(_ row: SQLiteRow) -> Found {
            (
                row.int64(0), row.int64(5), PolicyState(queue: row.int(1), rank: row.int64(2), frequency: row.int(3)),
                row.double(4)
            )
        }
        var updates: [(seq: Int64, state: PolicyState, accessed: Double, old: PolicyState)] = []
        updates.reserveCapacity(accesses.count)
        // States are computed in the order of the reads (least recent first: ranks follow it).
        for (key, access) in accesses {
            // By the key's home id, as a read finds it (from what the last batches found or
            // wrote if nothing changed since); the key index only while displaced entries exist.
            let homeID = Self.entryID(forKey: key)
            var entry: Found? = known.state(ofEntry: homeID, key: key).map {
                (id: homeID, seq: $0.seq, state: $0.state, accessed: $0.accessed)
            }
            if entry == nil {
                hitWriteLookups.withLock { $0 += 1 }
                entry = try db.first(
                    """
                    SELECT e.id, s.queue, s.rank, s.frequency, s.accessed, s.seq FROM entries e
                    JOIN states s ON s.seq = e.seq WHERE e.id = ?1 AND e.key = ?2
                    """,
                    [.integer(homeID), .blob(key)], map: found)
            }
            if entry == nil, displaced {
                entry = try db.first(
                    """
                    SELECT e.id, s.queue, s.rank, s.frequency, s.accessed, s.seq FROM entries e
                    JOIN states s ON s.seq = e.seq WHERE e.key = ?1 AND e.displaced = 1
                    """,
                    [.blob(key)], map: found)
            }
            guard let entry else { continue }
            let state =
                try policy.stateAfterHits(
                    entry.state, hits: access.hits, fingerprint: Self.fingerprint(key), in: &policyIndex) ?? entry.state
            if policy.usesFrequencySketch { noteSketchRequests(access.hits) }
            let accessed = access.date.timeIntervalSince1970
            let writes = state != entry.state || accessed - entry.accessed >= Self.accessTimeResolution
            if entry.id == homeID {
                let stored = PersistedStates.Known(
                    key: key, seq: entry.seq, state: state, accessed: writes ? accessed : entry.accessed)
                known.remember(stored, forEntry: homeID)
            }
            guard writes else { continue }
            updates.append((entry.seq, state, accessed, entry.state))
        }
        // Written in the order of the states' rows, which lie in the order their entries were
        // stored: successive updates change neighbouring pages, each page once. In the order of
        // ids (the index a read descends), the updates of 20 000 hits at a million entries
        // changed pages all over the table, and a batch larger than the page cache wrote them
        // to the WAL and read them back again (19 µs per hit record, against 10.7 µs when
        // the state was kept by id).
        updates.sort { $0.seq < $1.seq }
        for update in updates {
            if update.state.queue != update.old.queue {
                try db.run(
                    "UPDATE OR FAIL states SET accessed = ?1, queue = ?2, rank = ?3, frequency = ?4 WHERE seq = ?5",
                    [
                        .real(update.accessed), .int(update.state.queue), .integer(update.state.rank),
                        .int(update.state.frequency), .integer(update.seq),
                    ])
            } else if update.state.rank != update.old.rank {
                // Without `queue` in the SET list the totals trigger (UPDATE OF size, pinned,
                // queue) does not fire: most hits leave the queue alone.
                try db.run(
                    "UPDATE states SET accessed = ?1, rank = ?2, frequency = ?3 WHERE seq = ?4",
                    [
                        .real(update.accessed), .integer(update.state.rank), .int(update.state.frequency),
                        .integer(update.seq),
                    ])
            } else {
                // Nor is the rank index rewritten without `rank` in the SET list: SQLite rewrites
                // an index entry whose column is set, even to the same value, and a hit that
                // only sets a reference bit (every policy but LRU) would dirty a random page of
                // the rank index besides the entry's own.
                try db.run(
                    "UPDATE states SET accessed = ?1, frequency = ?2 WHERE seq = ?3",
                    [.real(update.accessed), .int(update.state.frequency), .integer(update.seq)])
            }
        }
        if policy.usesFrequencySketch { try saveSketch(in: db, force: false) }
        // The copy now matches the index, hit writes (and the sketch's) included.
        known.seal(try persistedStateMarks(db))
        persistedStates.withLock { $0 = known }
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
    /// under a lock) and written with the next batch of accesses — on the cache's background
    /// queue within ``Configuration/accessFlushDelay``, at once (still in the background) when
    /// hits for ``frontTierHitLimit`` distinct keys are waiting, before any eviction decision,
    /// or on ``close()`` — as one access per key at that moment. A key that is not stored is
    /// ignored when the batch is written. ``statistics`` does not change.
    ///
    /// - Parameter key: The key, as stored; an empty key is ignored.
    /// - Complexity: O(*k*) in the key's length.
    public func recordHit(forKey key: String) {
        guard !key.isEmpty, !index.isReadOnly else { return }
        let schedule = accessLog.withLock { log -> AccessFlushSchedule? in
            log.recordFrontTierHit(key)
            return Self.scheduleAfterFrontTierHits(&log)
        }
        scheduleAccessFlush(for: schedule)
    }

    /// Counts reads that a tier in front of this cache served, many keys under one lock.
    ///
    /// As ``recordHit(forKey:)`` does for one read, `hits` times for each key. ``Cache`` hands
    /// its memory hits over in such batches.
    ///
    /// - Complexity: O(*n*) for *n* keys (of their length).
    package func recordHits(_ batch: [(key: String, hits: Int)]) {
        guard !batch.isEmpty, !index.isReadOnly else { return }
        let schedule = accessLog.withLock { log -> AccessFlushSchedule? in
            for (key, hits) in batch where !key.isEmpty && hits > 0 { log.recordFrontTierHit(key, hits: hits) }
            return Self.scheduleAfterFrontTierHits(&log)
        }
        scheduleAccessFlush(for: schedule)
    }

    /// How many distinct keys' front-tier hits may wait in memory before they are written.
    public static let frontTierHitLimit = 16_384

    /// The flush to schedule after front-tier hits were added to `log` (under its lock).
    ///
    /// `nil` when one already is. A full log is written at once; otherwise within the flush delay.
    private static func scheduleAfterFrontTierHits(_ log: inout AccessLog) -> AccessFlushSchedule? {
        let isFull = log.frontTierCount >= frontTierHitLimit
        switch log.schedule {
        case .immediate: return nil
        case .delayed:
            guard isFull else { return nil }
            log.schedule = .immediate
        case .idle:
            log.schedule = isFull ? .immediate : .delayed
        }
        return log.schedule
    }

    /// Schedules the access flush that `schedule` asks for, if any (outside the log's lock).
    private func scheduleAccessFlush(for schedule: AccessFlushSchedule?) {
        guard let schedule else { return }
        scheduleAccessFlush(after: schedule == .immediate ? .zero : configuration.accessFlushDelay)
    }
}
