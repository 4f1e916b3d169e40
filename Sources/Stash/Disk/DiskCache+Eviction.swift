import Foundation

extension DiskCache {
    /// Evicts unpinned entries until at most `size` bytes of them remain.
    ///
    /// Expired entries go first, then entries in ``Configuration/evictionPolicy`` order.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* evicted entries of *N*.
    public func trim(toSize size: ByteCount) throws {
        try trim(targetSize: max(0, size.bytes), targetCount: .max)
    }

    /// Evicts unpinned entries until at most `count` of them remain.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* evicted entries of *N*.
    public func trim(toCount count: Int) throws {
        try trim(targetSize: .max, targetCount: max(0, count))
    }

    /// Removes every expired, unpinned entry.
    ///
    /// Expired entries are already invisible to reads; this reclaims their space early.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* expired entries of *N*.
    public func removeExpired() throws {
        try flush()
        let now = configuration.clock()
        let victims = try wrapIndexErrors {
            try index.write { db in
                var evictionIndex = try SQLiteEvictionIndex(db: db, cache: self, protecting: nil, reason: .expired)
                try evictExpired(from: &evictionIndex, now: now, all: true)
                return evictionIndex.victims
            }
        }
        finishEviction(victims)
    }

    /// An asynchronous sequence of the entries this object evicts from now on.
    ///
    /// Each call returns a new sequence; events are buffered until read.
    public func evictions() -> AsyncStream<EvictionEvent> {
        let id = UInt64.random(in: .min ... .max)
        let (stream, continuation) = AsyncStream<EvictionEvent>.makeStream()
        evictionStreams.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.evictionStreams.withLock { _ = $0.removeValue(forKey: id) }
        }
        return stream
    }

    private func trim(targetSize: Int, targetCount: Int) throws {
        // Staged changes are committed first, so that the trim sees (and counts) them.
        try flush()
        try trimCommitted(targetSize: targetSize, targetCount: targetCount)
    }

    /// Evicts from the committed entries, leaving staged changes where they are.
    func trimCommitted(targetSize: Int, targetCount: Int) throws {
        let now = configuration.clock()
        let victims = try wrapIndexErrors {
            try index.write { db in
                try flushAccesses(in: db)
                var evictionIndex = try SQLiteEvictionIndex(db: db, cache: self, protecting: nil, reason: .trimmed)
                try evictExpired(from: &evictionIndex, now: now, all: true)
                try configuration.evictionPolicy.evict(
                    from: &evictionIndex, targetSize: targetSize, targetCount: targetCount,
                    capacity: configuration.sizeLimit.bytes)
                return evictionIndex.victims
            }
        }
        finishEviction(victims)
    }

    /// Evicts inside the caller's write transaction when a limit is exceeded, down to the
    /// low-water mark, sparing `protected` (the entry just written) unless the adaptive policy's
    /// contest turns it away and `mayEvictProtected`.
    func evictIfNeeded(
        in db: SQLiteConnection, protecting protected: Int64, now: Date, mayEvictProtected: Bool = true
    ) throws -> [Victim] {
        let limits = EvictionLimits(
            sizeLimit: effectiveSizeLimit.bytes, countLimit: configuration.countLimit,
            lowWaterMark: configuration.lowWaterMark, maximumBatch: configuration.maximumEvictionBatch?.bytes)
        let read = try db.first(
            "SELECT size - pinned_size, count - pinned_count, main_size, main_count FROM totals WHERE id = 1"
        ) { (totals: (size: $0.int(0), count: $0.int(1)), main: (size: $0.int(2), count: $0.int(3))) }
        guard let (totals, main) = read else { return [] }
        guard limits.areExceeded(by: totals) else {
            // TinyLFU's window keeps its share while the cache fills (a bounded move or two).
            guard configuration.evictionPolicy.usesFrequencySketch else { return [] }
            var balancingIndex = SQLiteEvictionIndex(
                balancingIn: db, cache: self, protecting: protected, evictable: totals, main: main)
            try configuration.evictionPolicy.balanceWindow(
                in: &balancingIndex, targetSize: limits.targetSize, targetCount: limits.targetCount,
                capacity: limits.sizeLimit)
            return []
        }
        var evictionIndex = try SQLiteEvictionIndex(
            db: db, cache: self, protecting: protected,
            reason: totals.size > limits.sizeLimit ? .sizeLimit : .countLimit)
        evictionIndex.mayEvictIncoming = mayEvictProtected
        try evictExpired(from: &evictionIndex, now: now, all: false)
        try configuration.evictionPolicy.evict(
            from: &evictionIndex, targetSize: limits.targetSize, targetCount: limits.targetCount,
            capacity: limits.sizeLimit)
        return evictionIndex.victims
    }

    /// The expired unpinned entries, soonest expired first: `?1` now, `?2` the entry to spare,
    /// `?3` the most to return (-1 for all).
    ///
    /// The expiry index is named: without statistics SQLite's planner preferred the rank
    /// index and sorted every unpinned entry, a full scan in every eviction (at 2 000 entries,
    /// 0.5 ms of a store into a full cache).
    static let expiredEntriesQuery = """
        SELECT id, key, size, file FROM entries INDEXED BY entries_by_expiry
        WHERE expires IS NOT NULL AND pinned = 0 AND expires <= ?1 AND id != ?2
        ORDER BY expires LIMIT ?3
        """

    /// Expired entries go before any policy decision: they are worthless whatever their rank.
    private func evictExpired(from evictionIndex: inout SQLiteEvictionIndex, now: Date, all: Bool) throws {
        var expired: [(id: Int64, victim: Victim)] = []
        let now = now.timeIntervalSince1970
        try evictionIndex.db.query(
            Self.expiredEntriesQuery, [.real(now), .integer(evictionIndex.protected), .int(all ? -1 : 1024)]
        ) { row in
            let key = String(decoding: row.blob(1) ?? Data(), as: UTF8.self)
            expired.append((row.int64(0), Victim(key: key, size: row.int(2), file: row.text(3), reason: .expired)))
        }
        for (id, victim) in expired {
            try evictionIndex.db.run("DELETE FROM entries WHERE id = ?1", [.integer(id)])
            evictionIndex.appendVictim(victim)
        }
    }

    /// After commit: removes victims' files, counts them, and tells the observers.
    func finishEviction(_ victims: [Victim]) {
        guard !victims.isEmpty else { return }
        for victim in victims {
            // A failed unlink leaves an orphan that the collector removes later.
            if let file = victim.file { removeValueFile(file) }
        }
        accessLog.withLock { log in
            for victim in victims { log.forget(Data(victim.key.utf8)) }
        }
        let notAdmitted = victims.count { $0.reason == .notAdmitted }
        counters.withLock { stats in
            stats.evictions += victims.count
            stats.notAdmitted += notAdmitted
        }
        let continuations = evictionStreams.withLock { Array($0.values) }
        for victim in victims {
            let event = EvictionEvent(key: victim.key, size: victim.size, reason: victim.reason)
            configuration.onEviction?(event)
            for continuation in continuations { continuation.yield(event) }
        }
    }

    func wrapIndexErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw index.indexError(error)
        }
    }
}
