import Foundation

extension DiskCache {
    /// The eviction policy's view of the index, inside one write transaction.
    ///
    /// Collects what it evicts as `Victim`s, whose files are removed after the commit.
    struct SQLiteEvictionIndex: EvictionIndex {
        let db: SQLiteConnection
        /// The cache whose frequency sketch this index reads and changes.
        let cache: DiskCache
        /// The entry just written, which this transaction must not evict.
        let protected: Int64
        let reason: EvictionReason
        private(set) var evictable: (size: Int, count: Int)
        private(set) var victims: [Victim] = []
        /// Where the candidates read so far are (their rows' number, for the statements that
        /// change them); the key stays bytes until its entry is evicted.
        private var located: [Int64: (key: Data, file: String?, seq: Int64)] = [:]
        /// The queue each entry read by `entries(inQueue:…)` is in, as this transaction left it.
        private var queues: [Int64: Int] = [:]
        /// The main queue's front as read in this transaction: every unpinned entry of the main
        /// queue (but `protected`) whose rank lies in `from...through` (`through` `.max`: to the
        /// end), lowest first, as this transaction left it.
        ///
        /// A contest for room in the main queue reads its oldest entries until they make the
        /// room; when the main queue is over its bound (after the adaptive policy's climber
        /// widened the window, or in an eviction of a full megabyte), each candidate of an
        /// eviction read the same hundreds of entries again, and lost: at 100 000 entries,
        /// 1.46 million rows read for 10 000 stores into a full cache, 19 % of their
        /// instructions (callgrind). Entries leave this range only by `evict` and `setState`,
        /// which keep it up to date, and join the main queue only at its back.
        private var mainFront: (entries: [PolicyEntry], from: Int64, through: Int64)?
        private(set) var incoming: PolicyEntry?
        var mayEvictIncoming = true
        private var isSketchSynchronized = false
        /// The main queue's totals as read before this index changed anything; used once.
        private var unchangedMainTotals: (size: Int, count: Int)?
        private var rankBlock = 1
        /// Ranks reserved in this transaction and not yet handed out: `next...last`.
        private var reservedRanks: (next: Int64, last: Int64)?

        /// An index for evicting: it reads the unpinned totals that eviction counts down.
        init(db: SQLiteConnection, cache: DiskCache, protecting protected: Int64?, reason: EvictionReason) throws {
            self.db = db
            self.cache = cache
            self.protected = protected ?? -1
            self.reason = reason
            // CLOCK and queue moves take a rank per entry they pass over: 64 at a time.
            self.rankBlock = 64
            self.evictable =
                try db.first("SELECT size - pinned_size, count - pinned_count FROM totals WHERE id = 1") {
                    ($0.int(0), $0.int(1))
                } ?? (0, 0)
            if let protected {
                let found = try db.first(
                    """
                    SELECT e.size, s.queue, s.rank, s.frequency, e.key, e.file, e.seq FROM entries e
                    JOIN states s ON s.seq = e.seq WHERE e.id = ?1 AND e.pinned = 0
                    """,
                    [.integer(protected)]
                ) { row in
                    let key = row.blob(4) ?? Data()
                    let entry = PolicyEntry(
                        id: protected, size: row.int(0),
                        state: PolicyState(queue: row.int(1), rank: row.int64(2), frequency: row.int(3)),
                        fingerprint: DiskCache.fingerprint(key))
                    return (entry, key, row.text(5), row.int64(6))
                }
                // The adaptive policy may evict it when it loses its contest for room.
                if let (entry, key, file, seq) = found {
                    self.incoming = entry
                    located[protected] = (key, file, seq)
                    queues[protected] = entry.state.queue
                }
            }
        }

        /// An index for keeping TinyLFU's window at its share at a write that exceeds no limit:
        /// it evicts nothing, so it takes the unpinned and main-queue totals the caller just
        /// read and skips reading the entry being written (three statements fewer on every
        /// such store).
        init(
            balancingIn db: SQLiteConnection, cache: DiskCache, protecting protected: Int64,
            evictable: (size: Int, count: Int), main: (size: Int, count: Int)
        ) {
            self.db = db
            self.cache = cache
            self.protected = protected
            self.reason = .sizeLimit
            self.evictable = evictable
            self.unchangedMainTotals = main
        }

        /// An index for computing a new entry's or a hit's state, which never evicts and so
        /// skips reading the totals.
        ///
        /// - Parameter rankBlock: How many ranks to reserve from the shared clock at once, the
        ///   first time one is needed: the number of hits being written, so that a batch costs
        ///   one update of the clock rather than one per hit. Ranks left unused are a gap, which
        ///   no policy notices (ranks are only compared).
        init(updatingStatesIn db: SQLiteConnection, cache: DiskCache, rankBlock: Int = 1) {
            self.db = db
            self.cache = cache
            self.protected = -1
            self.reason = .sizeLimit
            self.evictable = (0, 0)
            self.rankBlock = max(1, rankBlock)
        }

        /// Unpinned entries of queue `?1` from rank `?2` on, lowest first, without `?3`, at most `?4`.
        static let candidatesQuery = """
            SELECT e.id, s.size, s.rank, s.frequency, e.key, e.file, s.seq FROM states s JOIN entries e ON e.seq = s.seq
            WHERE s.pinned = 0 AND s.queue = ?1 AND s.rank >= ?2 AND e.id != ?3 ORDER BY s.rank LIMIT ?4
            """

        mutating func entries(inQueue queue: Int, fromRank rank: Int64, limit: Int) throws -> [PolicyEntry] {
            guard queue == EvictionPolicy.mainQueue else { return try read(queue, fromRank: rank, limit: limit) }
            guard var front = mainFront, front.from <= rank, front.through == .max || rank <= front.through &+ 1
            else {
                let read = try read(queue, fromRank: rank, limit: limit)
                mainFront = (read, rank, read.count < limit ? .max : read.last!.state.rank)
                return read
            }
            // The first cached entry at or past `rank` (they are in rank order).
            var low = 0
            var high = front.entries.count
            while low < high {
                let middle = (low + high) / 2
                if front.entries[middle].state.rank < rank { low = middle + 1 } else { high = middle }
            }
            var result = Array(front.entries[low..<min(front.entries.count, low + limit)])
            guard result.count < limit, front.through != .max else { return result }
            let more = try read(queue, fromRank: max(rank, front.through &+ 1), limit: limit - result.count)
            front.entries += more
            front.through = more.count < limit - result.count ? .max : more.last!.state.rank
            mainFront = front
            result += more
            return result
        }

        /// Reads up to `limit` entries of `queue` from `rank` on, lowest first, and notes where
        /// they are.
        private mutating func read(_ queue: Int, fromRank rank: Int64, limit: Int) throws -> [PolicyEntry] {
            var batch: [PolicyEntry] = []
            var found: [(Int64, Data, String?, Int64)] = []
            try db.query(
                Self.candidatesQuery, [.int(queue), .integer(rank), .integer(protected), .int(limit)]
            ) { row in
                let keyBytes = row.blob(4) ?? Data()
                let state = PolicyState(queue: queue, rank: row.int64(2), frequency: row.int(3))
                batch.append(
                    PolicyEntry(
                        id: row.int64(0), size: row.int(1), state: state, fingerprint: DiskCache.fingerprint(keyBytes)))
                found.append((row.int64(0), keyBytes, row.text(5), row.int64(6)))
            }
            for (id, key, file, seq) in found { located[id] = (key, file, seq) }
            for entry in batch { queues[entry.id] = queue }
            return batch
        }

        mutating func queueTotals(_ queue: Int) throws -> (size: Int, count: Int) {
            // Read by the caller before any entry moved (the first question a balancing asks).
            if queue == 1, let main = unchangedMainTotals {
                unchangedMainTotals = nil
                return main
            }
            // Queue 1 is tracked; queue 0 holds the rest of the unpinned entries.
            return try db.first(
                """
                SELECT size - pinned_size - main_size, count - pinned_count - main_count, main_size, main_count
                FROM totals WHERE id = 1
                """
            ) { queue == 1 ? ($0.int(2), $0.int(3)) : ($0.int(0), $0.int(1)) } ?? (0, 0)
        }

        /// The row of entry `id`'s state: as read with the entry (the policy changes only entries
        /// it read), or looked up.
        private func seq(ofEntry id: Int64) throws -> Int64? {
            if let seq = located[id]?.seq { return seq }
            return try db.first("SELECT seq FROM entries WHERE id = ?1", [.integer(id)]) { $0.int64(0) }
        }

        mutating func setState(_ state: PolicyState, forEntry id: Int64) throws {
            guard let seq = try seq(ofEntry: id) else { return }
            if var front = mainFront {
                if let position = front.entries.firstIndex(where: { $0.id == id }) {
                    front.entries.remove(at: position)
                }
                if state.queue == EvictionPolicy.mainQueue {
                    if front.through == .max {
                        // It joins at the back, past what was read: the range ends before it.
                        front.through = state.rank &- 1
                    } else if state.rank <= front.through {
                        mainFront = nil  // not at the back (never so): read again
                        return try writeState(state, seq: seq, id: id)
                    }
                }
                mainFront = front
            }
            try writeState(state, seq: seq, id: id)
        }

        private mutating func writeState(_ state: PolicyState, seq: Int64, id: Int64) throws {
            if queues[id] == state.queue {
                // A second chance stays in its queue: without `queue` in the SET list the
                // totals trigger (UPDATE OF size, pinned, queue) does not fire.
                try db.run(
                    "UPDATE states SET rank = ?1, frequency = ?2 WHERE seq = ?3",
                    [.integer(state.rank), .int(state.frequency), .integer(seq)])
                return
            }
            try db.run(
                "UPDATE OR FAIL states SET queue = ?1, rank = ?2, frequency = ?3 WHERE seq = ?4",
                [.int(state.queue), .integer(state.rank), .int(state.frequency), .integer(seq)])
            queues[id] = state.queue
        }

        mutating func evict(_ entry: PolicyEntry) throws {
            if let position = mainFront?.entries.firstIndex(where: { $0.id == entry.id }) {
                mainFront!.entries.remove(at: position)
            }
            if let seq = located[entry.id]?.seq {
                try db.run("DELETE FROM entries WHERE seq = ?1", [.integer(seq)])
            } else {
                try db.run("DELETE FROM entries WHERE id = ?1", [.integer(entry.id)])
            }
            evictable.size -= entry.size
            evictable.count -= 1
            let location = located.removeValue(forKey: entry.id)
            let key = location.map { String(decoding: $0.key, as: UTF8.self) } ?? ""
            let reason = entry.id == protected ? EvictionReason.notAdmitted : reason
            victims.append(Victim(key: key, size: entry.size, file: location?.file, reason: reason))
        }

        mutating func nextRank() throws -> Int64 {
            if let (next, last) = reservedRanks, next <= last {
                reservedRanks = (next + 1, last)
                return next
            }
            // The transaction holds the write lock, so a block is as unique as single ranks.
            let last = try DiskCache.reserveRanks(rankBlock, in: db)
            let first = last - Int64(rankBlock) + 1
            reservedRanks = (first + 1, last)
            return first
        }

        mutating func rememberGhost(_ fingerprint: Int64, limit: Int) throws {
            try db.run(
                """
                INSERT OR FAIL INTO ghosts (fingerprint, rank) VALUES (?1, ?2)
                ON CONFLICT (fingerprint) DO UPDATE SET rank = excluded.rank
                """, [.integer(fingerprint), .integer(try nextRank())])
            let count = try db.first("SELECT ghosts FROM totals WHERE id = 1") { $0.int(0) } ?? 0
            if count > limit {
                try db.run(
                    "DELETE FROM ghosts WHERE fingerprint IN (SELECT fingerprint FROM ghosts ORDER BY rank LIMIT ?1)",
                    [.int(count - limit)])
            }
        }

        mutating func takeGhost(_ fingerprint: Int64) throws -> Bool {
            try db.run("DELETE FROM ghosts WHERE fingerprint = ?1", [.integer(fingerprint)]) > 0
        }

        mutating func cursor() throws -> Int64 {
            try db.first("SELECT hand FROM totals WHERE id = 1") { $0.int64(0) } ?? 0
        }

        mutating func setCursor(_ rank: Int64) throws {
            try db.run("UPDATE totals SET hand = ?1 WHERE id = 1", [.integer(rank)])
        }

        mutating func withFrequencySketch<T>(_ body: (inout FrequencySketch) throws -> T) throws -> T {
            if !isSketchSynchronized {
                try cache.synchronizeSketch(in: db)
                isSketchSynchronized = true
            }
            return try cache.sketchSlot.withLock { slot in
                var sketch = slot.sketch ?? FrequencySketch(tracksChanges: true)
                slot.sketch = nil  // moved out and back, so that the table is never copied
                defer { slot.sketch = sketch }
                return try body(&sketch)
            }
        }

        /// Moves victims out after eviction; used by callers that evict expired entries too.
        mutating func appendVictim(_ victim: Victim) {
            mainFront = nil  // read again: the victim is gone
            victims.append(victim)
            evictable.size -= victim.size
            evictable.count -= 1
        }
    }

    /// A 64-bit hash of a key's bytes, for S3-FIFO's ghost queue and TinyLFU's frequency sketch.
    static func fingerprint(_ keyBytes: some ContiguousBytes) -> Int64 {
        Int64(bitPattern: Checksum.of(keyBytes))
    }

    /// Advances the index's logical clock by `n` and returns its new value; ranks are unique
    /// across every process sharing the directory.
    ///
    /// Read, then written: the caller's transaction holds the write lock. The clock is read
    /// only when this connection does not know it already: from earlier in the transaction, or
    /// from its previous one if nothing else has written since (`followsOwnCommit`). It is
    /// written once, when the transaction commits (`SQLiteConnection.pendingClock`, written by
    /// `DiskIndex.write`), however many ranks the transaction took: a store into a full cache
    /// took three (its own, and two for the window's moves), each an `UPDATE` of the totals
    /// of its own (6 % of the store's instructions, callgrind). A plain write costs less than
    /// one `UPDATE … RETURNING`, which SQLite runs through a temporary table.
    static func reserveRanks(_ n: Int, in db: SQLiteConnection) throws -> Int64 {
        let clock: Int64
        if let known = db.knownClock, db.isStillCurrent(fromWriteTransaction: known.transaction) {
            clock = known.value
        } else {
            clock = try db.first("SELECT clock FROM totals WHERE id = 1") { $0.int64(0) } ?? 0
        }
        db.knownClock = (db.writeTransactions, clock + Int64(n))
        db.pendingClock = clock + Int64(n)
        return clock + Int64(n)
    }
}
