import Foundation

extension DiskCache {
    /// Whether the cache may hold `key`.
    ///
    /// `false` only when no entry of it can be there, so that a caller that answers a miss
    /// without reading the index (a proxy's event loop) can skip the read. Always `true` without
    /// ``Configuration/keepsKeyFilter``, and until the filter is built.
    ///
    /// The filter knows every key that this object stored, the keys in the index when it was
    /// built (on a background queue when the cache opened, and again as it fills), and the keys
    /// that other processes stored before each of this object's commits. A key that another
    /// process stored since may be answered `false` until then: the caller then misses, which
    /// costs a fetch, never a wrong answer. A `true` is wrong about 1 time in 100 at most (a
    /// Bloom filter's false positive), which costs the read it would have made anyway.
    ///
    /// - Complexity: O(*k*) in the key's length.
    package func mayHoldKey(_ key: String) -> Bool {
        guard let keyFilter else { return true }
        return keyFilter.mayContain(Self.filterHash(ofKey: key))
    }

    /// The filter's hash of a key: the key's id in the index (``entryID(forKey:)``), which is
    /// also what an entry that is not displaced has in its `id` column.
    static func filterHash(ofKey key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { UInt64(bitPattern: entryID(forKey: UnsafeRawBufferPointer($0))) }
    }

    /// Notes a key published (under ``WriteMode/immediate``), after its commit: a build that
    /// began before then records it as added meanwhile, one that begins after reads its row.
    /// (A staged key enters in ``stage(_:forKey:)``.)
    func noteStoredKey(_ key: String) {
        guard let keyFilter, keyFilter.insert(Self.filterHash(ofKey: key)) else { return }
        buildKeyFilterInBackground()
    }

    static func filterHash(ofKeyBytes keyBytes: Data) -> UInt64 {
        UInt64(bitPattern: entryID(forKey: keyBytes))
    }

    /// Builds the filter from the index on a background queue (a failed build leaves the
    /// filter answering `true`, and is tried again after the next commit).
    func buildKeyFilterInBackground() {
        guard keyFilter != nil else { return }
        DispatchQueue.global(qos: .utility).async(group: backgroundWork) { [self] in
            buildKeyFilter()
        }
    }

    /// Builds the filter from the index, on the caller's thread.
    func buildKeyFilter() {
        guard let keyFilter, keyFilter.beginBuild() else { return }
        // The keys staged before the build began and not committed yet; any staged after are
        // added to the build as they come (both under the staging area's lock). A key committed
        // after this is in the index that the read below sees.
        let staged = staging.withLock { staging in staging.stagedKeys.map { Self.filterHash(ofKeyBytes: $0) } }
        do {
            let (hashes, lastSeq) = try index.read { db -> ([UInt64], Int64) in
                var hashes = staged
                // The covering index of ids: about 20 bytes per entry, not the rows.
                try db.query("SELECT id FROM entries WHERE id >= 0") { row in
                    hashes.append(UInt64(bitPattern: row.int64(0)))
                }
                try Self.displacedHashes(in: db, since: nil) { hashes.append($0) }
                let lastSeq = try db.first("SELECT max(seq) FROM entries") { $0.int64(0) } ?? 0
                return (hashes, lastSeq)
            }
            keyFilter.finishBuild(hashes, lastSeq: lastSeq)
        } catch {
            keyFilter.abandonBuild()
        }
    }

    /// Adds the keys of rows appended since the filter's last look (other processes' stores; this
    /// object's are in it already), inside the writer's transaction.
    ///
    /// The rows are read only when another connection committed since the last look
    /// (`PRAGMA data_version`, which this connection's own commits leave as it is).
    func refreshKeyFilter(in db: SQLiteConnection) throws {
        guard let keyFilter else { return }
        guard let since = keyFilter.lastSeq else {
            buildKeyFilterInBackground()  // not built yet, or the build failed
            return
        }
        let version = try db.first("PRAGMA data_version") { $0.int64(0) }
        let newest = try db.first("SELECT max(seq) FROM entries") { $0.int64(0) } ?? since
        if let version, keyFilter.dataVersion == version {
            _ = keyFilter.add([], lastSeq: newest)
            return
        }
        var hashes: [UInt64] = []
        var last = newest
        try db.query("SELECT seq, id FROM entries WHERE seq > ?1 AND id >= 0", [.integer(since)]) { row in
            last = max(last, row.int64(0))
            hashes.append(UInt64(bitPattern: row.int64(1)))
        }
        try Self.displacedHashes(in: db, since: since) { hashes.append($0) }
        if keyFilter.add(hashes, lastSeq: last) { buildKeyFilterInBackground() }
        keyFilter.dataVersion = version
    }

    /// The hashes of the keys of displaced entries (whose ids are not their keys' hashes), all
    /// of them or those of rows after `since`.
    private static func displacedHashes(
        in db: SQLiteConnection, since: Int64?, _ body: (UInt64) -> Void
    ) throws {
        let sql =
            since == nil
            ? "SELECT key FROM entries WHERE displaced = 1"
            : "SELECT key FROM entries WHERE displaced = 1 AND seq > ?1"
        try db.query(sql, since.map { [.integer($0)] } ?? []) { row in
            guard let key = row.blob(0) else { return }
            body(key.withUnsafeBytes { UInt64(bitPattern: entryID(forKey: $0)) })
        }
    }

    /// A Bloom filter of key hashes, four probes per key, sized for 16 bits per key when built and
    /// rebuilt once it holds one key per 10 bits (a false positive rate of about 1 %), up to
    /// ``maximumBits`` (8 MiB, about 5 million keys at 16 bits each); one that size is rebuilt
    /// once its keys have doubled since it was built (which drops the keys no longer held).
    final class KeyFilter: Sendable {
        private struct State {
            /// Empty until the first build ends.
            var words: [UInt64] = []
            var mask: UInt32 = 0
            /// Keys added since the last build (counted even when not new).
            var keys = 0
            /// The keys the filter takes before it is rebuilt.
            var capacity = 0
            /// Hashes added while a build reads the index, which the build adds at its end.
            var pending: [UInt64]?
            var rebuildAsked = false
            /// The largest row number the filter has seen in the index.
            var lastSeq: Int64?
            /// The writer connection's `PRAGMA data_version` at the last look.
            var dataVersion: Int64?
        }

        private let state = LockedValue(State())

        /// Whether the filter may hold `hash` (`true` until it is built).
        func mayContain(_ hash: UInt64) -> Bool {
            state.withLock { state in
                guard !state.words.isEmpty else { return true }
                let (low, high) = Self.halves(hash)
                for probe in 0..<UInt32(Self.probeCount) {
                    let bit = (low &+ probe &* high) & state.mask
                    if state.words[Int(bit >> 6)] & (1 << UInt64(bit & 63)) == 0 { return false }
                }
                return true
            }
        }

        /// Adds `hash`; `true` when the filter is full and should be rebuilt (asked once).
        func insert(_ hash: UInt64) -> Bool {
            state.withLock { state in Self.add(hash, to: &state) }
        }

        /// Adds `hashes` seen in the index up to row `lastSeq`; `true` as ``insert(_:)``.
        func add(_ hashes: [UInt64], lastSeq: Int64) -> Bool {
            state.withLock { state in
                var full = false
                for hash in hashes where Self.add(hash, to: &state) { full = true }
                state.lastSeq = max(state.lastSeq ?? lastSeq, lastSeq)
                return full
            }
        }

        /// The largest row number seen, once built.
        var lastSeq: Int64? { state.withLock { $0.lastSeq } }

        /// The writer connection's data version when the filter last read the rows appended.
        var dataVersion: Int64? {
            get { state.withLock { $0.dataVersion } }
            set { state.withLock { $0.dataVersion = newValue } }
        }

        /// Starts a build; `false` when one is under way.
        func beginBuild() -> Bool {
            state.withLock { state in
                guard state.pending == nil else { return false }
                state.pending = []
                return true
            }
        }

        /// Ends a build with the index's hashes (read up to row `lastSeq`) and those added meanwhile.
        func finishBuild(_ hashes: [UInt64], lastSeq: Int64) {
            // Sized outside the lock for the keys read; a power of two of at least 16 bits per key.
            let bits = min(Self.maximumBits, max(1 << 16, Self.powerOfTwo(atLeast: hashes.count * 16)))
            var words = [UInt64](repeating: 0, count: bits / 64)
            let mask = UInt32(bits - 1)
            for hash in hashes { Self.set(hash, in: &words, mask: mask) }
            state.withLock { state in
                let pending = state.pending ?? []
                for hash in pending { Self.set(hash, in: &words, mask: mask) }
                state.words = words
                state.mask = mask
                state.keys = hashes.count + pending.count
                state.capacity = bits < Self.maximumBits ? bits / 10 : 2 * state.keys
                state.pending = nil
                state.rebuildAsked = false
                // The rows after the build's read are read at the next look (the index may have
                // been rebuilt, with rows numbered anew: not the largest number ever seen).
                state.lastSeq = lastSeq
                state.dataVersion = nil
            }
        }

        /// Ends a build that failed: the filter stays as it was.
        func abandonBuild() {
            state.withLock { state in
                state.pending = nil
                state.rebuildAsked = false
            }
        }

        private static func add(_ hash: UInt64, to state: inout State) -> Bool {
            state.pending?.append(hash)
            guard !state.words.isEmpty else { return false }
            set(hash, in: &state.words, mask: state.mask)
            state.keys += 1
            guard state.keys > state.capacity, !state.rebuildAsked, state.pending == nil else { return false }
            state.rebuildAsked = true
            return true
        }

        private static func set(_ hash: UInt64, in words: inout [UInt64], mask: UInt32) {
            let (low, high) = halves(hash)
            for probe in 0..<UInt32(probeCount) {
                let bit = (low &+ probe &* high) & mask
                words[Int(bit >> 6)] |= 1 << UInt64(bit & 63)
            }
        }

        static let probeCount = 4
        /// The largest filter: 8 MiB.
        static let maximumBits = 1 << 26

        /// The probes' start and step (double hashing: bit *i* is `low + i * high`, masked).
        private static func halves(_ hash: UInt64) -> (UInt32, UInt32) {
            (UInt32(truncatingIfNeeded: hash), UInt32(truncatingIfNeeded: hash >> 32) | 1)
        }

        private static func powerOfTwo(atLeast count: Int) -> Int {
            count <= 1 ? 1 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
        }
    }
}
