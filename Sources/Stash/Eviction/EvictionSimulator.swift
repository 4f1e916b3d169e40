/// Replays a request trace against an eviction policy without storing any bytes.
///
/// It drives the same `EvictionPolicy` code and `EvictionLimits` that ``DiskCache`` uses, over
/// an `InMemoryEvictionIndex`, and so predicts DiskCache's hits and misses for a trace: a
/// request for a present key of the same size is a hit (recorded as a read); anything else
/// is a miss followed by a store of that many bytes, which evicts (or, under no limit, keeps
/// TinyLFU's window within its share) as DiskCache would.
package struct EvictionSimulator {
    package let policy: EvictionPolicy
    package let limits: EvictionLimits
    package private(set) var index = InMemoryEvictionIndex()
    package private(set) var requests = 0
    package private(set) var hits = 0
    package private(set) var bytesRequested = 0
    package private(set) var bytesHit = 0

    private var ids: [String: Int64] = [:]
    private var keys: [Int64: String] = [:]
    private var nextID: Int64 = 0

    package init(policy: EvictionPolicy, limits: EvictionLimits) {
        self.policy = policy
        self.limits = limits
    }

    /// Processes one request; returns whether it was a hit.
    @discardableResult
    package mutating func request(key: String, size: Int) throws -> Bool {
        requests += 1
        bytesRequested += size
        let existing = ids[key].flatMap { index.stored[$0] }
        if let id = ids[key], let existing, existing.size == size {
            let fingerprint = existing.fingerprint
            if let state = try policy.stateAfterHits(existing.state, hits: 1, fingerprint: fingerprint, in: &index) {
                try index.setState(state, forEntry: id)
            }
            hits += 1
            bytesHit += size
            return true
        }
        // DiskCache refuses a value larger than its limit; so does the simulation.
        guard size <= limits.sizeLimit else { return false }
        let id: Int64
        if let known = ids[key] {
            id = known
        } else {
            nextID += 1
            id = nextID
            ids[key] = id
            keys[id] = key
        }
        let fingerprint = DiskCache.fingerprint(Array(key.utf8))
        let state = try policy.insertionState(existing: existing?.state, fingerprint: fingerprint, in: &index)
        index.upsert(id: id, size: size, state: state, fingerprint: fingerprint)
        index.protected = id
        defer { index.protected = nil }
        guard limits.areExceeded(by: index.evictable) else {
            try policy.balanceWindow(
                in: &index, targetSize: limits.targetSize, targetCount: limits.targetCount, capacity: limits.sizeLimit)
            return false
        }
        try policy.evict(
            from: &index, targetSize: limits.targetSize, targetCount: limits.targetCount, capacity: limits.sizeLimit)
        for evicted in index.evicted {
            if let evictedKey = keys.removeValue(forKey: evicted) { ids[evictedKey] = nil }
        }
        index.evicted.removeAll(keepingCapacity: true)
        return false
    }

    /// Forgets what a reopened DiskCache forgets: the adaptive policy's ghosts and regrets.
    package mutating func reopen() {
        index.forgetRegrets()
    }

    /// Whether `key` is cached.
    package func contains(_ key: String) -> Bool {
        ids[key].map { index.stored[$0] != nil } ?? false
    }

    /// Misses per request (0 before any request).
    package var objectMissRatio: Double { requests == 0 ? 0 : 1 - Double(hits) / Double(requests) }

    /// Missed bytes per requested byte (0 before any request).
    package var byteMissRatio: Double {
        bytesRequested == 0 ? 0 : 1 - Double(bytesHit) / Double(bytesRequested)
    }
}
