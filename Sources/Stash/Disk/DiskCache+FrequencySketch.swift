import Foundation

extension DiskCache {
    /// This object's copy of the index's frequency sketch and window climber (TinyLFU and the
    /// adaptive policy).
    ///
    /// The copy is what eviction reads. It is written to the `sketch` table inside a write
    /// transaction that already runs (a store or a batch of hits), in chunks, only those that
    /// changed, once ``Configuration/accessFlushBatch`` requests or one per 16 table words
    /// (whichever is more) have been recorded since the last time, and on ``close()``. So a
    /// hit is never a disk write, a write of the sketch costs at most 128 bytes per request
    /// recorded, and a crash loses at most the requests since the last write (the sketch is
    /// approximate anyway). Each write stamps a new generation; a transaction that finds
    /// another generation in the index (another process wrote, or the sketch was reset)
    /// reloads it first.
    struct SketchSlot {
        var sketch: FrequencySketch?
        var generation: Int64 = 0
        var unsavedRequests = 0
        /// The writer connection and write transaction in which the copy was last found
        /// current with the index (see `synchronizeSketch(in:)`).
        var checked: (connection: Int, transaction: Int)?

        /// Whether the copy holds anything the index does not.
        var hasUnsavedChanges: Bool {
            guard let sketch else { return false }
            return unsavedRequests > 0 || !sketch.changedChunks.isEmpty
        }
    }

    /// Makes the copy current with the index, inside a write transaction.
    ///
    /// A missing sketch (a new cache, or one that used another policy) is rebuilt
    /// approximately: one request for each unpinned entry.
    ///
    /// The copy checked earlier in the same transaction, or in the previous one of the same
    /// connection when nothing else has written since (`followsOwnCommit`), is current without
    /// reading the header: a store used to read it twice (3 % of its instructions, callgrind).
    func synchronizeSketch(in db: SQLiteConnection) throws {
        let here = (connection: db.identity, transaction: db.writeTransactions)
        let isKnownCurrent = sketchSlot.withLock { slot in
            guard slot.sketch != nil, let checked = slot.checked, checked.connection == here.connection,
                db.isStillCurrent(fromWriteTransaction: checked.transaction)
            else { return false }
            slot.checked = here
            return true
        }
        if isKnownCurrent { return }
        let stored = try db.first("SELECT data FROM sketch WHERE chunk = -1") { Self.decodeWords($0.blob(0)) } ?? []
        var header: (generation: Int64, words: Int, additions: Int)?
        if stored.count == 3 || stored.count == 3 + Self.climberWords {
            header = (Int64(bitPattern: stored[0]), Int(clamping: stored[1]), Int(clamping: stored[2]))
        }
        // An index written before the adaptive policy has no climber: it starts afresh.
        let climber = stored.count == 3 + Self.climberWords ? Self.decodeClimber(stored[3...]) : WindowClimber()
        let current = sketchSlot.withLock { slot in
            let isCurrent = slot.sketch != nil && slot.generation == header?.generation ?? 0
            if isCurrent { slot.checked = here }
            return isCurrent
        }
        if current { return }
        var loaded: FrequencySketch?
        if let header, header.words > 0, header.words <= FrequencySketch.maximumWords {
            var words = [UInt64](repeating: 0, count: header.words)
            var chunks = 0
            try db.query("SELECT chunk, data FROM sketch WHERE chunk >= 0 ORDER BY chunk") { row in
                let start = row.int(0) * FrequencySketch.wordsPerChunk
                let chunk = Self.decodeWords(row.blob(1))
                guard start + chunk.count <= words.count else { return }
                words.replaceSubrange(start..<start + chunk.count, with: chunk)
                chunks += 1
            }
            if chunks == (header.words + FrequencySketch.wordsPerChunk - 1) / FrequencySketch.wordsPerChunk {
                loaded = FrequencySketch(words: words, additions: header.additions, tracksChanges: true)
                loaded?.climber = climber
            }
        }
        if loaded == nil {
            var rebuilt = FrequencySketch(tracksChanges: true)
            var fingerprints: [Int64] = []
            try db.query("SELECT key FROM entries WHERE pinned = 0") { row in
                fingerprints.append(Self.fingerprint(row.blob(0) ?? Data()))
            }
            rebuilt.ensureCapacity(forEntries: fingerprints.count)
            for fingerprint in fingerprints { rebuilt.add(fingerprint) }
            loaded = rebuilt
        }
        sketchSlot.withLock { slot in
            // The ghosts this object's evictions left stay true of the keys they name when
            // another process's sketch replaces the copy: keep them, so that the climber of a
            // cache that several processes write still gathers regrets between reloads.
            if let regrets = slot.sketch?.regrets { loaded?.regrets = regrets }
            slot = SketchSlot(sketch: loaded, generation: header?.generation ?? 0, unsavedRequests: 0, checked: here)
        }
    }

    /// Counts `requests` recorded in the copy since it was last written.
    func noteSketchRequests(_ requests: Int) {
        sketchSlot.withLock { $0.unsavedRequests += requests }
    }

    /// Writes the chunks of the copy that changed, with a new generation, inside a write
    /// transaction: always when `force` is set, otherwise once enough requests accumulated.
    func saveSketch(in db: SQLiteConnection, force: Bool) throws {
        let batch = configuration.accessFlushBatch
        // Decide and take a snapshot under the lock (the words are shared, not copied); encode
        // and write outside it.
        let snapshot: (sketch: FrequencySketch, generation: Int64)? = sketchSlot.withLock { slot in
            guard let sketch = slot.sketch, slot.hasUnsavedChanges,
                force || slot.unsavedRequests >= max(batch, sketch.words.count / 16)
            else { return nil }
            slot.sketch!.markSaved()
            slot.generation = Int64.random(in: 1...Int64.max)
            slot.unsavedRequests = 0
            return (sketch, slot.generation)
        }
        guard let (sketch, generation) = snapshot else { return }
        let words = sketch.words
        for chunk in sketch.changedChunks.sorted() {
            let start = chunk * FrequencySketch.wordsPerChunk
            let data = Self.encodeWords(words[start..<min(words.count, start + FrequencySketch.wordsPerChunk)])
            try db.run("INSERT OR REPLACE INTO sketch (chunk, data) VALUES (?1, ?2)", [.int(chunk), .blob(data)])
        }
        let header = Self.encodeWords(
            [UInt64(bitPattern: generation), UInt64(words.count), UInt64(sketch.additions)]
                + Self.encodeClimber(sketch.climber))
        try db.run("INSERT OR REPLACE INTO sketch (chunk, data) VALUES (-1, ?1)", [.blob(header)])
    }

    /// Forgets the copy (and the adaptive policy's ghosts), so that the next transaction
    /// reloads or rebuilds it.
    func discardSketch() {
        sketchSlot.withLock { $0 = SketchSlot() }
    }

    /// Header words after the sketch's own three: the window climber's fields.
    static let climberWords = 5

    private static func encodeClimber(_ climber: WindowClimber) -> [UInt64] {
        [
            climber.windowShare.bitPattern, climber.step.bitPattern, climber.previousHitRate.bitPattern,
            UInt64(climber.sampleHits), UInt64(climber.sampleRequests),
        ]
    }

    private static func decodeClimber(_ words: ArraySlice<UInt64>) -> WindowClimber {
        let fields = Array(words)
        return WindowClimber(
            windowShare: Double(bitPattern: fields[0]), step: Double(bitPattern: fields[1]),
            previousHitRate: Double(bitPattern: fields[2]), sampleHits: Int(clamping: fields[3]),
            sampleRequests: Int(clamping: fields[4]))
    }

    /// One allocation, eight bytes stored per word (appending them word by word to a `Data`
    /// was 6 % of a store into a full cache of 100 000 entries, perf).
    private static func encodeWords(_ words: some Collection<UInt64>) -> Data {
        var data = Data(count: words.count * 8)
        data.withUnsafeMutableBytes { raw in
            for (offset, word) in words.enumerated() {
                raw.storeBytes(of: word.littleEndian, toByteOffset: offset * 8, as: UInt64.self)
            }
        }
        return data
    }

    private static func decodeWords(_ data: Data?) -> [UInt64] {
        guard let data, data.count % 8 == 0 else { return [] }
        return data.withUnsafeBytes { raw in
            (0..<data.count / 8).map {
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self))
            }
        }
    }
}
