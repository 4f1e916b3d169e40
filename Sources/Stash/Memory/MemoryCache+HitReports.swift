// How a ``Cache`` learns of its memory hits in bulk, for its disk tier's eviction policy,
// without a second lock or a copy of the key on each hit.
extension MemoryCache {
    /// What a reported hit asks of the caller, once the shard's lock is released.
    @usableFromInline
    package enum HitReport: Sendable {
        /// Nothing.
        case none
        /// The first hit waiting in its shard: make sure the hits are taken within a bounded delay.
        case first
        /// Its shard holds ``State/reportLimit`` entries' hits: take them now.
        case full
    }

    /// Returns the value stored for a key, as ``value(forKey:)`` does, and also counts the hit
    /// for ``takeReportedHits()``.
    ///
    /// The hit costs a counter in the entry's node and, on the entry's first hit since the last
    /// take, a slot appended to its shard's list. `report` says when to take them.
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    package func value(forKey key: Key, reportingHit report: inout HitReport) -> Value? {
        hitValue(forKey: HashedKey(key), reporting: true, &report)
    }

    /// Takes the reported hits of every shard: each key once, with how many hits it had.
    ///
    /// - Complexity: O(k) for k keys.
    package func takeReportedHits() -> [(key: Key, hits: Int)] {
        eachShard { state in state.takeReportedHits() }.flatMap { $0 }
    }

    /// How many hits were ever reported through ``value(forKey:reportingHit:)``.
    ///
    /// - Complexity: O(s) for s shards.
    package var reportedHitCount: Int { eachShard { $0.reportedHitCount }.reduce(0, +) }
}

extension MemoryCache.State {
    /// How many entries' hits a shard collects before it asks for them to be taken.
    ///
    /// Large, so that the delay (``Cache`` takes them within the disk's access flush delay)
    /// rather than the count decides, and an entry hit many times in that delay is handed over
    /// once: with 4096, a `Cache<Data>` memory hit cost 1.67× a bare memory hit on 100 000
    /// random keys, as every hit still paid for a hand-over of its own.
    @inlinable static var reportLimit: Int { 65_536 }

    /// Counts a reported hit on `slot`; see ``MemoryCache/value(forKey:reportingHit:)``.
    @inlinable
    mutating func reportHit(_ slot: Int) -> MemoryCache.HitReport {
        reportedHitCount += 1
        let unreported = storage[mark: slot].unreportedHits
        guard unreported < .max else { return .none }
        storage[mark: slot].unreportedHits = unreported + 1
        guard unreported == 0 else { return .none }
        reportedSlots.append(slot)
        if reportedSlots.count == 1 { return .first }
        return reportedSlots.count == Self.reportLimit ? .full : .none
    }

    /// Turns the reported slots into keys before a slot is freed.
    @inlinable
    mutating func keepReportedKeys() {
        for slot in reportedSlots {
            reportedKeys.append((storage.key(at: slot), Int(storage[mark: slot].unreportedHits)))
            storage[mark: slot].unreportedHits = 0
        }
        reportedSlots.removeAll(keepingCapacity: true)
    }

    mutating func takeReportedHits() -> [(key: Key, hits: Int)] {
        keepReportedKeys()
        defer { reportedKeys.removeAll() }
        return reportedKeys
    }
}
