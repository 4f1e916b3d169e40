import Foundation

/// A thread-safe, in-memory cache of decoded values with a cost limit, a count limit, optional
/// time-to-live and a choice of eviction policy: least-recently-used, SIEVE or S3-FIFO.
///
/// ```swift
/// let thumbnails = MemoryCache<String, Data>(costLimit: 50_000_000, cost: { $0.count })
/// thumbnails["photo-42"] = data
/// let hit = thumbnails["photo-42"]  // never suspends, never decodes
/// ```
///
/// **Threads.** A large cache is split into shards (up to 16, by the key's hash), each with its
/// own lock, its share of the limits and its own policy state, as Guava's, moka's and
/// quick_cache's are: hits on different shards never wait for one another. A hit takes its
/// shard's lock only for a hash lookup and a bit, a counter or a slot appended to a small
/// buffer that the policy replays later under the same lock (as Caffeine's read buffers do), so
/// it allocates nothing and retains nothing but the value it returns. See
/// ``init(costLimit:countLimit:defaultTimeToLive:entryCostLimitRatio:policy:shards:cost:clock:)``
/// for how many shards a cache gets.
///
/// Every operation is synchronous and O(1) except the bulk ones, which say so. Entries live in
/// contiguous buffers linked by index and freed slots are reused, so storing an entry
/// allocates no object of its own, and in optimized builds a hit, and an insertion into a cache
/// that has reached its steady size, allocate nothing. A shard finds a key's slot in an
/// open-addressing table of 8-byte buckets (part of the key's hash and the slot), and the slot's
/// key, value and policy bits lie together, so a hit reads about two cache lines of the cache's
/// own besides the lock's.
///
/// **Limits.** After every insertion the cache evicts entries, in the order its ``policy``
/// chooses, until ``totalCost`` ≤ ``costLimit`` and ``totalCount`` ≤ ``countLimit``: each shard
/// holds at most its share of both, so the limits hold at every moment, whatever the threads. A
/// value whose cost is more than ``entryCostLimitRatio`` × ``costLimit`` (or than its shard's
/// share of ``costLimit``) is not kept at all, so one huge value cannot flush everything else.
///
/// **Policy.** ``MemoryEvictionPolicy/leastRecentlyUsed`` (the default) evicts the entry read or
/// written longest ago. ``MemoryEvictionPolicy/sieve`` and ``MemoryEvictionPolicy/s3fifo`` are
/// scan-resistant: a one-off pass over many keys does not flush the entries in use, and a hit
/// only sets a bit or a counter instead of moving the entry. See ``MemoryEvictionPolicy``.
///
/// **Expiry.** An entry whose time-to-live has passed is a miss and is removed when it is next
/// looked at; until then it still counts towards the totals. ``removeExpiredValues()`` sweeps
/// them all.
///
/// **Memory pressure.** ``handleMemoryPressure(_:)`` halves the cache on a warning and empties it
/// when pressure is critical; ``startRespondingToMemoryPressure(_:)`` wires it to a
/// ``MemoryPressureMonitor``. Nothing runs in the background unless you ask for it.
///
/// Values must be `Sendable` because a value stored on one thread is handed out on others.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    // Internal rather than private so that the inlinable operations below can reach them: a
    // client specializes those for its own Key and Value instead of calling generic code.
    /// The shards' locks and states; they keep alive what ``shards`` points at.
    @usableFromInline let shardStates: [LockedValue<State>]
    /// The shards' handles, in a plain buffer: picking a shard retains nothing.
    // nonisolated(unsafe): written once in init, then only read; each handle's value is only
    // touched under its mutex.
    @usableFromInline nonisolated(unsafe) let shards: UnsafeMutableBufferPointer<LockedValue<State>.Handle>
    /// How far a key's hash is shifted right to give its shard: 64 with one shard.
    @usableFromInline let shardShift: UInt
    /// The injected clock, read as the time elapsed since an instant it gave at creation.
    ///
    /// Entries keep their expiry as such a `Duration`, which has a fixed layout, rather than as
    /// a `ContinuousClock.Instant`, whose layout is resilient: storing one would make every copy,
    /// move and nil check of an entry a value-witness call, even in specialized code.
    @usableFromInline let clock: @Sendable () -> Duration
    @usableFromInline let costFunction: (@Sendable (Value) -> Int)?

    /// The time-to-live given to values stored without one, or `nil` if they never expire.
    public let defaultTimeToLive: Duration?

    /// The largest fraction of ``costLimit`` that one entry may cost and still be kept.
    public let entryCostLimitRatio: Double

    /// Which entries the cache gives up first when it is over a limit.
    public let policy: MemoryEvictionPolicy

    /// A default cost limit sized for entries whose cost is their size in bytes: a quarter of
    /// physical memory, at most 512 MiB.
    public static var defaultCostLimit: Int {
        let quarter = ProcessInfo.processInfo.physicalMemory / 4
        return Int(min(quarter, 512 * 1_048_576))
    }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - costLimit: The most that all entries together may cost. Defaults to
    ///     ``defaultCostLimit``. Must not be negative.
    ///   - countLimit: The most entries the cache holds. Defaults to no limit. Must not be
    ///     negative.
    ///   - defaultTimeToLive: How long a value stored without its own time-to-live is served.
    ///     Defaults to `nil`: values never expire. Must be positive when given.
    ///   - entryCostLimitRatio: An entry costing more than this fraction of `costLimit` is not
    ///     kept. Defaults to 0.1. Must be in `0 < ratio ≤ 1`.
    ///   - policy: Which entries to give up first when over a limit. Defaults to
    ///     ``MemoryEvictionPolicy/adaptive``, which keeps often-read entries through a one-off
    ///     scan; see ``MemoryEvictionPolicy`` for when to pick
    ///     ``MemoryEvictionPolicy/leastRecentlyUsed``, ``MemoryEvictionPolicy/sieve`` or
    ///     ``MemoryEvictionPolicy/s3fifo``.
    ///   - shards: How many independently locked parts the cache is split into, a power of two
    ///     from 1 to 64. Each holds the keys whose hash falls in it, `1/shards` of both limits and
    ///     its own policy state, so the policy decides within a shard: pass 1 for exactly one
    ///     policy order over all entries. Defaults to `nil`: four per processor, at most 16, but
    ///     only as many as leave each shard at least 1024 of `costLimit` and of `countLimit` and
    ///     room for an entry at the `entryCostLimitRatio` cap (8 for the default ratio of 0.1); a
    ///     small cache gets one.
    ///   - cost: Computes the cost of a value stored without an explicit cost, for example
    ///     `{ $0.count }` for `Data`. Defaults to `nil`: such values cost 1.
    ///   - clock: The current time, for expiry. Inject a manual clock in tests. Defaults to
    ///     `ContinuousClock.now`.
    public init(
        costLimit: Int = MemoryCache.defaultCostLimit,
        countLimit: Int = .max,
        defaultTimeToLive: Duration? = nil,
        entryCostLimitRatio: Double = 0.1,
        policy: MemoryEvictionPolicy = .adaptive,
        shards: Int? = nil,
        cost: (@Sendable (Value) -> Int)? = nil,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        precondition(costLimit >= 0, "MemoryCache costLimit must not be negative; it is \(costLimit).")
        precondition(countLimit >= 0, "MemoryCache countLimit must not be negative; it is \(countLimit).")
        precondition(
            entryCostLimitRatio > 0 && entryCostLimitRatio <= 1,
            "MemoryCache entryCostLimitRatio must be in 0 < ratio ≤ 1; it is \(entryCostLimitRatio).")
        if let defaultTimeToLive {
            precondition(
                defaultTimeToLive > .zero,
                "MemoryCache defaultTimeToLive must be positive; it is \(defaultTimeToLive). Pass nil for no expiry.")
        }
        if let shards {
            precondition(
                shards >= 1 && shards <= 64 && shards & (shards - 1) == 0,
                "MemoryCache shards must be a power of two from 1 to 64; it is \(shards).")
        }
        let count =
            shards
            ?? Self.automaticShardCount(
                costLimit: costLimit, countLimit: countLimit, entryCostLimitRatio: entryCostLimitRatio)
        self.shardStates = (0..<count).map { index in
            var state = State(
                costLimit: Self.share(of: costLimit, shard: index, of: count),
                countLimit: Self.share(of: countLimit, shard: index, of: count),
                entryCostLimitRatio: entryCostLimitRatio, policy: policy)
            state.setCostLimit(state.costLimit, cacheCostLimit: costLimit)
            return LockedValue(state)
        }
        self.shards = .allocate(capacity: count)
        _ = self.shards.initialize(from: shardStates.map(\.handle))
        self.shardShift = UInt(64 - count.trailingZeroBitCount)
        let epoch = clock()
        self.clock = { epoch.duration(to: clock()) }
        self.costFunction = cost
        self.defaultTimeToLive = defaultTimeToLive
        self.entryCostLimitRatio = entryCostLimitRatio
        self.policy = policy
    }

    deinit {
        if let subscription = shards[0].withLock({ $0.pressureSubscription }) {
            subscription.monitor.removeHandler(subscription.id)
        }
        shards.deallocate()
    }

    // MARK: - Reading

    /// Returns the value stored for a key, or `nil` on a miss, and records the access for the
    /// eviction policy.
    ///
    /// Under ``MemoryEvictionPolicy/leastRecentlyUsed`` the entry becomes the most recently
    /// used (the move is buffered and made before the order is next read or changed); under
    /// ``MemoryEvictionPolicy/sieve`` and ``MemoryEvictionPolicy/s3fifo`` it is marked as read
    /// and keeps its place.
    ///
    /// An entry whose time-to-live has passed is a miss; it is removed and reported to
    /// ``onEviction`` with ``MemoryEvictionReason/expired``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` if there is none or it has expired.
    /// - Complexity: O(1).
    @inlinable
    public func value(forKey key: Key) -> Value? {
        var report = HitReport.none
        return hitValue(forKey: HashedKey(key), reporting: false, &report)
    }

    /// The hit path: one lookup under the shard's lock, without the clock and without the
    /// eviction bookkeeping, which only an expiring entry needs; such an entry (or a cache with
    /// a default time-to-live) goes to ``valueOrExpiry(forKey:reporting:_:)``, which reads the
    /// clock.
    ///
    /// The fast path returns a plain optional and says through a captured flag whether it
    /// decided: a `Value??` result unwrapped with `??` cost 5 more instructions per hit
    /// (callgrind, `Data` values).
    @inlinable @inline(__always)
    func hitValue(forKey key: HashedKey, reporting: Bool, _ report: inout HitReport) -> Value? {
        guard defaultTimeToLive == nil else { return valueOrExpiry(forKey: key, reporting: reporting, &report) }
        var needsTime = false
        let value = shard(for: key).withLock { state -> Value? in
            guard let slot = state.storage.slot(forKey: key) else {
                state.statistics.misses += 1
                return nil
            }
            if state.storage.expiringCount > 0 && state.storage.nodes[slot].expiry != nil {
                needsTime = true
                return nil
            }
            state.statistics.hits += 1
            state.recordHit(slot, hash: key.hash)
            if reporting { report = state.reportHit(slot) }
            return state.storage.value(at: slot)
        }
        guard needsTime else { return value }
        return valueOrExpiry(forKey: key, reporting: reporting, &report)
    }

    /// The hit path of an entry that may have expired: reads the clock, and removes and reports
    /// the entry if it has.
    @inlinable
    func valueOrExpiry(forKey key: HashedKey, reporting: Bool, _ report: inout HitReport) -> Value? {
        withLiveSlot(forKey: key) { state, slot in
            guard let slot else {
                state.statistics.misses += 1
                return nil
            }
            state.statistics.hits += 1
            state.recordHit(slot, hash: key.hash)
            if reporting { report = state.reportHit(slot) }
            return state.storage.value(at: slot)
        }
    }

    /// Returns whether a live value is stored for a key, without counting a hit or a miss and
    /// without changing the eviction order.
    ///
    /// An expired entry is removed and reported, as in ``value(forKey:)``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: `true` if ``value(forKey:)`` would return a value now.
    /// - Complexity: O(1).
    @inlinable
    public func containsValue(forKey key: Key) -> Bool {
        withLiveSlot(forKey: HashedKey(key)) { _, slot in slot != nil }
    }

    // MARK: - Writing

    /// Stores a value for a key, replacing any value already stored for it, then evicts entries
    /// in the order of the ``policy`` until the cache is within its limits.
    ///
    /// Replacing a value counts as an access to the entry, as a hit does. Room for a new entry
    /// is made before it is added, so it is never evicted to make room for itself.
    ///
    /// If the value's cost is more than ``entryCostLimitRatio`` × ``costLimit``, or its
    /// time-to-live is not positive, or ``countLimit`` is zero, the value is not kept and any
    /// earlier value for the key is removed, so a lookup never returns a stale value.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - cost: What the value costs against ``costLimit``. Defaults to the `cost` function
    ///     given at creation, or 1 without one. Must not be negative.
    ///   - timeToLive: How long the value is served. Defaults to ``defaultTimeToLive``.
    /// - Complexity: O(1) amortized, plus O(k) for k evicted entries.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int? = nil, timeToLive: Duration? = nil) {
        let cost = cost ?? costFunction?(value) ?? 1
        precondition(cost >= 0, "MemoryCache cost must not be negative; the cost of the value for \(key) is \(cost).")
        let timeToLive = timeToLive ?? defaultTimeToLive
        let expiry = timeToLive.map { clock() + $0 }
        let isAcceptable = timeToLive.map { $0 > .zero } ?? true
        let key = HashedKey(key)
        let displaced = mutate(shard(for: key)) { state, evictions in
            state.store(
                value, forKey: key, cost: cost, expiry: expiry, isAcceptable: isAcceptable, evictions: &evictions)
        }
        _ = displaced  // Released here, outside the lock, in case its deinit is expensive.
    }

    /// Removes the value stored for a key.
    ///
    /// The removed value is returned, not reported to ``onEviction``.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The value that was stored, or `nil` if there was none or it had expired.
    /// - Complexity: O(1).
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        withLiveSlot(forKey: HashedKey(key)) { state, slot in
            guard let slot else { return nil }
            state.catchUp()
            return state.storage.remove(at: slot).value
        }
    }

    /// The value for a key: reading is ``value(forKey:)``, assigning a value is
    /// ``setValue(_:forKey:cost:timeToLive:)`` with the default cost and time-to-live, and
    /// assigning `nil` is ``removeValue(forKey:)``.
    ///
    /// - Complexity: O(1) amortized, plus O(k) for k evicted entries.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                setValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: - Removing in bulk

    /// Removes every entry, reporting each to ``onEviction`` with
    /// ``MemoryEvictionReason/removedAll``, least recently used (or oldest) first within each
    /// shard.
    ///
    /// It also forgets the policy's history: SIEVE's hand and S3-FIFO's ghost keys.
    ///
    /// - Complexity: O(n) for n entries; the values are released outside the locks.
    public func removeAll() {
        removeAll(reason: .removedAll)
    }

    /// Evicts entries in the order of the ``policy`` until ``totalCost`` is at most `cost`.
    ///
    /// Each shard keeps its share of `cost` in proportion to what it holds now, rounded down.
    ///
    /// - Parameter cost: The total cost to trim down to. Must not be negative.
    /// - Complexity: O(k) amortized for k evicted entries.
    public func trim(toCost cost: Int) {
        precondition(cost >= 0, "MemoryCache.trim(toCost:) needs a cost that is not negative; it is \(cost).")
        let targets = Self.proportionalShares(of: cost, among: eachShard { $0.storage.totalCost })
        for index in 0..<shards.count {
            mutate(shards[index]) { state, evictions in
                state.evict(toCost: targets[index], count: .max, reason: .trimmed, evictions: &evictions)
            }
        }
    }

    /// Evicts entries in the order of the ``policy`` until ``totalCount`` is at most `count`.
    ///
    /// Each shard keeps its share of `count` in proportion to what it holds now, rounded down.
    ///
    /// - Parameter count: The number of entries to trim down to. Must not be negative.
    /// - Complexity: O(k) amortized for k evicted entries.
    public func trim(toCount count: Int) {
        precondition(count >= 0, "MemoryCache.trim(toCount:) needs a count that is not negative; it is \(count).")
        let targets = Self.proportionalShares(of: count, among: eachShard { $0.storage.count })
        for index in 0..<shards.count {
            mutate(shards[index]) { state, evictions in
                state.evict(toCost: .max, count: targets[index], reason: .trimmed, evictions: &evictions)
            }
        }
    }

    /// Removes every entry whose time-to-live has passed, reporting each with
    /// ``MemoryEvictionReason/expired``.
    ///
    /// - Complexity: O(n) for n entries.
    public func removeExpiredValues() {
        let now = clock()
        for index in 0..<shards.count {
            mutate(shards[index]) { state, evictions in state.removeExpired(at: now, evictions: &evictions) }
        }
    }

    // MARK: - Limits, totals and statistics

    /// The most that all entries together may cost.
    ///
    /// Each shard holds an equal share of it. Lowering it evicts entries in the order of the
    /// ``policy``, reported with ``MemoryEvictionReason/limit``, until the cache fits. Must not
    /// be negative. Entries already stored are not re-checked against the new per-entry limit.
    ///
    /// - Complexity: O(s) for s shards to read; setting is O(k) amortized for k evicted entries.
    public var costLimit: Int {
        get { eachShard { $0.costLimit }.reduce(0, +) }
        set {
            precondition(newValue >= 0, "MemoryCache costLimit must not be negative; it is \(newValue).")
            for index in 0..<shards.count {
                let share = Self.share(of: newValue, shard: index, of: shards.count)
                mutate(shards[index]) { state, evictions in
                    state.setCostLimit(share, cacheCostLimit: newValue)
                    state.evict(toCost: share, count: state.countLimit, reason: .limit, evictions: &evictions)
                }
            }
        }
    }

    /// The most entries the cache holds.
    ///
    /// Each shard holds an equal share of it. Lowering it evicts entries in the order of the
    /// ``policy``, reported with ``MemoryEvictionReason/limit``, until the cache fits. Must not
    /// be negative.
    ///
    /// - Complexity: O(s) for s shards to read; setting is O(k) amortized for k evicted entries.
    public var countLimit: Int {
        get {
            let limits = eachShard { $0.countLimit }
            return limits[0] == .max ? .max : limits.reduce(0, +)
        }
        set {
            precondition(newValue >= 0, "MemoryCache countLimit must not be negative; it is \(newValue).")
            for index in 0..<shards.count {
                let share = Self.share(of: newValue, shard: index, of: shards.count)
                mutate(shards[index]) { state, evictions in
                    state.countLimit = share
                    state.evict(toCost: state.costLimit, count: share, reason: .limit, evictions: &evictions)
                }
            }
        }
    }

    /// The sum of the costs of the stored entries, including expired ones not yet removed.
    ///
    /// - Complexity: O(s) for s shards.
    public var totalCost: Int { eachShard { $0.storage.totalCost }.reduce(0, +) }

    /// The number of stored entries, including expired ones not yet removed.
    ///
    /// - Complexity: O(s) for s shards.
    public var totalCount: Int { eachShard { $0.storage.count }.reduce(0, +) }

    /// A snapshot of the hit, miss, eviction, expiration and insertion counters.
    ///
    /// Each shard counts its own; the snapshot adds them up, one shard after another.
    ///
    /// - Complexity: O(s) for s shards.
    public var statistics: MemoryCacheStatistics {
        eachShard { $0.statistics }.reduce(into: MemoryCacheStatistics()) { sum, part in sum.add(part) }
    }

    /// Called for each entry that the cache drops on its own, with the reason.
    ///
    /// Called after the shard's lock is released, on the thread that caused the eviction, so the
    /// callback may use the cache. Not called for values removed with ``removeValue(forKey:)`` or
    /// replaced by a new value for the same key. Defaults to `nil`.
    public var onEviction: (@Sendable (Key, Value, MemoryEvictionReason) -> Void)? {
        get { shards[0].withLock { $0.onEviction } }
        set {
            for index in 0..<shards.count { shards[index].withLock { $0.onEviction = newValue } }
        }
    }

    // MARK: - Internals

    /// The shard that holds `key`: the top bits of its hash, as the index uses the bottom ones.
    @inlinable
    func shard(for key: HashedKey) -> LockedValue<State>.Handle {
        shards[Int(truncatingIfNeeded: UInt(bitPattern: key.hash) >> shardShift)]
    }

    /// Runs `body` under `shard`'s lock, then reports the evictions it decided on once the lock
    /// is released.
    ///
    /// The evictions and the callback leave the lock through captured locals, not in a tuple
    /// with `body`'s result: a tuple of generic types needs its metadata built at run time
    /// wherever the code is not specialized. The callback is copied only when there is
    /// something to report, so a hit does not retain it.
    @inlinable @discardableResult
    func mutate<Result>(
        _ shard: LockedValue<State>.Handle, _ body: (inout State, inout Evictions) -> Result
    ) -> Result {
        var evictions = Evictions()
        var callback: (@Sendable (Key, Value, MemoryEvictionReason) -> Void)?
        let result = shard.withLock { state in
            evictions.isCollecting = state.onEviction != nil
            let result = body(&state, &evictions)
            if !evictions.items.isEmpty { callback = state.onEviction }
            return result
        }
        if let callback {
            for eviction in evictions.items { callback(eviction.key, eviction.value, eviction.reason) }
        }
        return result
    }

    /// Runs `body` under the lock of the key's shard with the slot of the live entry for `key`,
    /// or `nil` if there is none, after removing the entry if it has expired.
    ///
    /// Reading the clock costs more than the rest of a hit, so it is read only when it can
    /// matter: up front when values get a default time-to-live, and otherwise only once the
    /// lookup has found an entry that has an expiry; the lookup then runs again with the time.
    /// The clock is never called under the lock.
    @inlinable
    func withLiveSlot<Result>(forKey key: HashedKey, _ body: (inout State, Int?) -> Result) -> Result {
        let shard = shard(for: key)
        var now = defaultTimeToLive == nil ? nil : clock()
        while true {
            var result: Result?
            mutate(shard) { state, evictions in
                switch state.lookUp(key, at: now, evictions: &evictions) {
                case .found(let slot): result = body(&state, slot)
                case .missing: result = body(&state, nil)
                case .needsTime: result = nil
                }
            }
            if let result { return result }
            now = clock()  // Only reached with `now == nil`, so the second lookup is the last.
        }
    }
}
