import Foundation

extension DiskCache {
    /// Evicts unpinned entries until at most `size` bytes of them remain.
    ///
    /// Expired entries go first, then entries in ``Configuration/evictionPolicy`` order.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* evicted entries of *N*.
    public func trim(toSize size: ByteCount) throws {
        try trim(targetSize: max(0, size.bytes), targetCount: nil)
    }

    /// Evicts unpinned entries until at most `count` of them remain.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* evicted entries of *N*.
    public func trim(toCount count: Int) throws {
        try trim(targetSize: nil, targetCount: max(0, count))
    }

    /// Removes every expired, unpinned entry.
    ///
    /// Expired entries are already invisible to reads; this reclaims their space early.
    ///
    /// - Throws: ``StashError`` when the index cannot be written.
    /// - Complexity: O(*e* log *N*) for *e* expired entries of *N*.
    public func removeExpired() throws {
        let now = configuration.clock()
        let victims = try wrapIndexErrors {
            try index.write { db in
                var evictable = try evictableTotals(in: db)
                return try evictExpired(in: db, protecting: nil, now: now, totals: &evictable, all: true)
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

    private func trim(targetSize: Int?, targetCount: Int?) throws {
        let now = configuration.clock()
        let victims = try wrapIndexErrors {
            try index.write { db in
                try flushAccesses(in: db)
                var evictable = try evictableTotals(in: db)
                var victims = try evictExpired(in: db, protecting: nil, now: now, totals: &evictable, all: true)
                victims += try evictByPolicy(
                    in: db, protecting: nil, totals: &evictable, targetSize: targetSize ?? .max,
                    targetCount: targetCount ?? .max, reason: .trimmed)
                return victims
            }
        }
        finishEviction(victims)
    }

    /// Evicts inside the caller's write transaction when a limit is exceeded, down to the
    /// low-water mark, never touching `protected` (the entry just written).
    func evictIfNeeded(in db: SQLiteConnection, protecting protected: Int64, now: Date) throws -> [Victim] {
        var evictable = try evictableTotals(in: db)
        let sizeLimit = configuration.sizeLimit.bytes
        let countLimit = configuration.countLimit ?? .max
        let overSize = evictable.size > sizeLimit
        guard overSize || evictable.count > countLimit else { return [] }
        let mark = configuration.lowWaterMark
        let targetSize = Int(Double(sizeLimit) * mark)
        let targetCount = countLimit == .max ? .max : Int(Double(countLimit) * mark)
        var victims = try evictExpired(in: db, protecting: protected, now: now, totals: &evictable, all: false)
        victims += try evictByPolicy(
            in: db, protecting: protected, totals: &evictable, targetSize: targetSize, targetCount: targetCount,
            reason: overSize ? .sizeLimit : .countLimit)
        return victims
    }

    /// Bytes and count of unpinned entries.
    func evictableTotals(in db: SQLiteConnection) throws -> (size: Int, count: Int) {
        try db.first("SELECT size - pinned_size, count - pinned_count FROM totals WHERE id = 1") {
            ($0.int(0), $0.int(1))
        } ?? (0, 0)
    }

    private func evictExpired(
        in db: SQLiteConnection, protecting protected: Int64?, now: Date, totals: inout (size: Int, count: Int),
        all: Bool
    ) throws -> [Victim] {
        var victims: [Victim] = []
        var rows: [(id: Int64, victim: Victim)] = []
        try db.query(
            """
            SELECT id, key, size, file FROM entries
            WHERE expires IS NOT NULL AND pinned = 0 AND expires <= ?1 AND id != ?2
            ORDER BY expires LIMIT ?3
            """,
            [.real(now.timeIntervalSince1970), .integer(protected ?? -1), .int(all ? -1 : 1024)]
        ) { row in
            let key = String(decoding: row.blob(1) ?? Data(), as: UTF8.self)
            rows.append((row.int64(0), Victim(key: key, size: row.int(2), file: row.text(3), reason: .expired)))
        }
        for (id, victim) in rows {
            try db.run("DELETE FROM entries WHERE id = ?1", [.integer(id)])
            totals.size -= victim.size
            totals.count -= 1
            victims.append(victim)
        }
        return victims
    }

    private func evictByPolicy(
        in db: SQLiteConnection, protecting protected: Int64?, totals: inout (size: Int, count: Int),
        targetSize: Int, targetCount: Int, reason: EvictionReason
    ) throws -> [Victim] {
        var victims: [Victim] = []
        var lastRank = Int64.min
        while totals.size > targetSize || totals.count > targetCount {
            var batch: [(id: Int64, rank: Int64, victim: Victim)] = []
            try db.query(
                """
                SELECT id, rank, key, size, file FROM entries
                WHERE pinned = 0 AND rank >= ?1 AND id != ?2 ORDER BY rank LIMIT 64
                """,
                [.integer(lastRank), .integer(protected ?? -1)]
            ) { row in
                let key = String(decoding: row.blob(2) ?? Data(), as: UTF8.self)
                batch.append(
                    (row.int64(0), row.int64(1), Victim(key: key, size: row.int(3), file: row.text(4), reason: reason)))
            }
            if batch.isEmpty { break }
            for (id, rank, victim) in batch {
                guard totals.size > targetSize || totals.count > targetCount else { break }
                try db.run("DELETE FROM entries WHERE id = ?1", [.integer(id)])
                totals.size -= victim.size
                totals.count -= 1
                lastRank = rank
                victims.append(victim)
            }
        }
        return victims
    }

    /// After commit: removes victims' files, counts them, and tells the observers.
    func finishEviction(_ victims: [Victim]) {
        guard !victims.isEmpty else { return }
        for victim in victims {
            // A failed unlink leaves an orphan that the collector removes later.
            if let file = victim.file { try? POSIXFile.remove(path(forFile: file)) }
        }
        accessLog.withLock { log in
            for victim in victims { log.forget(Data(victim.key.utf8)) }
        }
        counters.withLock { $0.evictions += victims.count }
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
