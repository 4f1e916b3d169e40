import Foundation

/// A cache's shared tier and when values reach it.
struct SharedTierLink: Sendable {
    var tier: any SharedTier
    var writeMode: SharedTierWriteMode
    var pending: LockedValue<[Int: Task<Void, Never>]>
    var nextID: LockedValue<Int>
}

extension Cache {
    /// Creates a cache over existing tiers with a shared tier behind them: memory → disk →
    /// shared.
    ///
    /// The `async` reads ask `sharedTier` when both local tiers miss, and keep a shared hit on
    /// disk and in memory; the `async` stores and removals reach it too. The synchronous methods
    /// never touch it (they cannot wait for a network round trip). A shared tier's failures are
    /// misses (counted in ``CacheStatistics/sharedFailures``), never errors.
    ///
    /// - Parameters:
    ///   - disk: The disk tier.
    ///   - memory: The memory tier; see ``init(disk:memory:codec:cost:onEvent:)``.
    ///   - codec: Encodes values for the disk and the shared tier, and decodes them back.
    ///   - cost: A value's cost in the memory tier.
    ///   - sharedTier: The tier shared by a fleet, such as `PostgresSharedTier`.
    ///   - sharedTierWriteMode: When stores reach it. Defaults to
    ///     ``SharedTierWriteMode/writeBehind``: in the background, so a slow database never
    ///     slows a store.
    ///   - onEvent: Called for each ``CacheEvent``.
    /// - Complexity: O(1).
    public convenience init(
        disk: DiskCache, memory: MemoryCache<CacheKey, Value>? = nil, codec: some ValueCodec<Value>,
        cost: (@Sendable (Value) -> Int)? = nil, sharedTier: any SharedTier,
        sharedTierWriteMode: SharedTierWriteMode = .writeBehind, onEvent: (@Sendable (CacheEvent) -> Void)? = nil
    ) {
        self.init(disk: disk, memory: memory, codec: codec, cost: cost, onEvent: onEvent)
        shared.withLock {
            $0 = SharedTierLink(
                tier: sharedTier, writeMode: sharedTierWriteMode, pending: LockedValue([:]), nextID: LockedValue(0))
        }
    }

    /// The shared tier behind the disk tier, or `nil`.
    public var sharedTier: (any SharedTier)? { shared.withLock { $0?.tier } }

    /// Waits until every shared-tier write started in the background so far has finished.
    ///
    /// Call it before a process exits, or in tests; reads never need it.
    ///
    /// - Complexity: O(*w*) for *w* writes in flight.
    public func waitForSharedTierWrites() async {
        guard let link = shared.withLock({ $0 }) else { return }
        while let task = link.pending.withLock({ $0.values.first }) {
            await task.value
        }
    }

    /// The miss path of an `async` read: the disk tier, then the shared tier.
    @usableFromInline
    func readBelowMemory(key: String, memoryKey: CacheKey) async throws -> (value: Value, tier: CacheTier)? {
        if let value = try await readFromDiskOffloaded(key: key, memoryKey: memoryKey) { return (value, .disk) }
        guard let link = shared.withLock({ $0 }) else { return nil }
        let entry: SharedEntry?
        do {
            entry = try await link.tier.entry(forKey: key)
        } catch {
            // Deliberately tolerated: the shared tier is an optimisation; the read is a miss.
            counters.withLock { $0.sharedFailures += 1 }
            return nil
        }
        guard let entry else { return nil }
        let value: Value
        do {
            value = try codec.decode(entry.body)
        } catch {
            counters.withLock { $0.decodingFailures += 1 }
            onEvent?(
                .decodingFailed(
                    key: key,
                    error: StashError(
                        .decodingFailed,
                        "The shared tier's bytes for '\(key)' are not a valid encoding of a \(Value.self).",
                        cause: error)))
            return nil
        }
        counters.withLock {
            $0.misses -= 1  // counted by the disk read, which missed; the shared tier answered
            $0.sharedHits += 1
        }
        let timeToLive = entry.expires.map {
            Duration.seconds(max(0.001, $0.timeIntervalSince(disk.configuration.clock())))
        }
        do {
            try await disk.offload {
                try self.keepLocally(value, bytes: entry.body, key: key, entry: entry, timeToLive: timeToLive)
            }
        } catch {
            // Deliberately tolerated: the value is returned; the next read asks the shared tier again.
            counters.withLock { $0.sharedFailures += 1 }
        }
        return (value, .shared)
    }

    /// Stores a shared hit in both local tiers, like ``store(_:forKey:timeToLive:pinned:metadata:)``
    /// without encoding again.
    private func keepLocally(_ value: Value, bytes: Data, key: String, entry: SharedEntry, timeToLive: Duration?) throws
    {
        let memoryKey = CacheKey(key)
        let ticket = mutations.begin(memoryKey)
        do {
            try disk.store(bytes, forKey: key, timeToLive: timeToLive, metadata: entry.metadata)
        } catch {
            _ = mutations.end(ticket)
            throw error
        }
        memory.setValue(value, forKey: memoryKey, cost: cost?(value), timeToLive: memoryTimeToLive(timeToLive))
        if mutations.end(ticket) { memory.removeValue(forKey: memoryKey) }
    }

    /// Writes a value just stored to the shared tier, now or in the background.
    func shareStore(_ value: Value, forKey key: String, timeToLive: Duration?, metadata: DiskCache.Metadata) async {
        guard let link = shared.withLock({ $0 }) else { return }
        let bytes: Data
        do {
            bytes = try encode(value, forKey: key)
        } catch {
            counters.withLock { $0.sharedFailures += 1 }
            return
        }
        let now = disk.configuration.clock()
        let ttl = timeToLive ?? disk.configuration.defaultTimeToLive
        let entry = SharedEntry(
            key: key, body: bytes, metadata: metadata, created: now,
            expires: ttl.map {
                now.addingTimeInterval(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18)
            })
        await run(on: link) { try await link.tier.store(entry) }
    }

    /// Removes a key from the shared tier too, so that the fleet stops serving it.
    func shareRemoval(forKey key: String) async {
        guard let link = shared.withLock({ $0 }) else { return }
        await run(on: link) { try await link.tier.removeEntry(forKey: key) }
    }

    private func run(on link: SharedTierLink, _ operation: @escaping @Sendable () async throws -> Void) async {
        let counters = counters
        let work: @Sendable () async -> Void = {
            do {
                try await operation()
            } catch {
                // Deliberately tolerated: the local tiers hold the value; the shared tier is an
                // optimisation for the rest of the fleet.
                counters.withLock { $0.sharedFailures += 1 }
            }
        }
        switch link.writeMode {
        case .writeThrough:
            await work()
        case .writeBehind:
            let id = link.nextID.withLock { id -> Int in
                id += 1
                return id
            }
            link.pending.withLock { pending in
                pending[id] = Task {
                    await work()
                    _ = link.pending.withLock { $0.removeValue(forKey: id) }
                }
            }
        }
    }
}
