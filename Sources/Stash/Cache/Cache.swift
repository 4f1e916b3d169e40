import Foundation

/// A two-tier cache of values: decoded values in memory, in front of their encoded bytes on
/// disk.
///
/// A read looks in the ``memory`` tier first (no I/O, no decoding), then on ``disk``: a value
/// found there is decoded once and promoted to memory. A store writes through to both tiers.
/// A ``ValueCodec`` turns values into bytes and back: `.data`, `.string`, `.json(T.self)`,
/// `.propertyList(T.self)`, or your own.
///
/// ```swift
/// let photos = try Cache(directory: .caches("photos"), sizeLimit: .megabytes(200), codec: .json(Photo.self))
/// try photos.store(photo, forKey: "photo-42")
/// let hit = try photos.value(forKey: "photo-42")              // memory, else disk, else nil
/// let (value, tier) = try photos.valueAndTier(forKey: "photo-42")!  // tier == .memory
/// ```
///
/// **Keys** are compared byte for byte, as UTF-8, in both tiers: `"café"` spelled with a
/// precomposed `é` and with a combining accent are two keys (see ``CacheKey``).
///
/// **Damaged values.** Bytes on disk that the codec cannot decode (written by another version
/// of the type, say) make the read a miss: the entry is removed, counted in
/// ``CacheStatistics/decodingFailures``, and reported to `onEvent`. A read never throws for
/// them.
///
/// **Memory pressure** empties or halves only the memory tier (see
/// ``MemoryCache/handleMemoryPressure(_:)`` and ``MemoryCache/startRespondingToMemoryPressure(_:)``
/// on ``memory``); values stay on disk and are promoted again when read.
///
/// **Concurrency.** One `Cache` may be used from many threads and tasks. Stores, removals and
/// promotions of one key that overlap are detected, and the key is then dropped from memory, so
/// the memory tier never keeps a value that differs from the one on disk. Writes made directly
/// to ``disk`` or ``memory`` (or by another process) bypass this bookkeeping.
///
/// - Important: The synchronous methods perform blocking file and database I/O whenever the
///   memory tier misses. From Swift concurrency, call the `async` variants, which answer memory
///   hits at once and run disk work off the caller's executor.
public final class Cache<Value: Sendable>: Sendable {
    /// The tier that served a hit.
    public typealias Tier = CacheTier
    /// Counters of both tiers together.
    public typealias Statistics = CacheStatistics
    /// Something the cache handled on its own.
    public typealias Event = CacheEvent

    /// The disk tier, holding encoded values.
    ///
    /// Use it for what only the disk offers (``DiskCache/fileURL(forKey:)-6x1sx``, pinning,
    /// ``DiskCache/verify(repair:)-9glgg``). Values stored through it directly are not seen by the
    /// memory tier until they are read through the cache.
    public let disk: DiskCache

    /// The memory tier, holding decoded values keyed by ``CacheKey``.
    ///
    /// Use it to respond to memory pressure or to trim memory; store values through the cache.
    public let memory: MemoryCache<CacheKey, Value>

    let codec: any ValueCodec<Value>
    /// The cost given to the memory tier explicitly, or `nil` to let the tier's own cost
    /// function decide.
    let cost: (@Sendable (Value) -> Int)?
    let onEvent: (@Sendable (CacheEvent) -> Void)?
    @usableFromInline let counters = LockedValue(CacheStatistics())
    /// Whether a hand-over of the memory tier's reported hits to the disk tier is scheduled.
    let isForwardingHits = LockedValue(false)
    let mutations = MutationTracker()
    let shared = LockedValue<SharedTierLink?>(nil)

    /// Creates a cache over existing tiers.
    ///
    /// - Parameters:
    ///   - disk: The disk tier. Other code may keep using it; see ``disk``.
    ///   - memory: The memory tier. Defaults to `nil`: a new ``MemoryCache`` with
    ///     ``MemoryCache/defaultCostLimit`` and no count limit, whose cost is `cost`.
    ///   - codec: Encodes values for the disk and decodes them back.
    ///   - cost: A value's cost in the memory tier. Defaults to `nil`: for a tier created here,
    ///     the length in bytes of `Data` values and the UTF-8 length of `String` values, and 1
    ///     for any other value; for a tier passed in, that tier's own cost function.
    ///   - onEvent: Called, outside any lock, for each ``CacheEvent`` (an undecodable entry
    ///     removed). Defaults to `nil`.
    /// - Complexity: O(1).
    public init(
        disk: DiskCache, memory: MemoryCache<CacheKey, Value>? = nil, codec: some ValueCodec<Value>,
        cost: (@Sendable (Value) -> Int)? = nil, onEvent: (@Sendable (CacheEvent) -> Void)? = nil
    ) {
        self.disk = disk
        self.memory = memory ?? MemoryCache(cost: cost ?? Self.defaultCost)
        self.codec = codec
        self.cost = memory == nil ? nil : cost
        self.onEvent = onEvent
    }

    /// Opens a disk tier in `directory` and creates a memory tier in front of it.
    ///
    /// - Parameters:
    ///   - directory: The disk tier's directory, created if needed. Use
    ///     `URL.caches(_:)` for the platform's caches folder.
    ///   - sizeLimit: The disk tier's byte limit. Defaults to 150 MB.
    ///   - memoryCostLimit: The most that the values in memory may cost together; with the
    ///     default cost of `Data` and `String` values, that is bytes. Defaults to
    ///     ``MemoryCache/defaultCostLimit``.
    ///   - memoryCountLimit: The most values kept in memory. Defaults to no limit; set one when
    ///     values cost 1 each (any type other than `Data` and `String` without a `cost`).
    ///   - memoryEvictionPolicy: Which values the memory tier gives up first. Defaults to
    ///     ``MemoryEvictionPolicy/adaptive``. The disk tier uses its default policy,
    ///     ``EvictionPolicy/adaptive``; pass your own ``DiskCache`` to
    ///     ``init(disk:memory:codec:cost:onEvent:)`` to choose another.
    ///   - codec: Encodes values for the disk and decodes them back.
    ///   - cost: A value's cost in memory. Defaults to `nil`: the length in bytes of `Data`
    ///     values and the UTF-8 length of `String` values, and 1 for any other value.
    ///   - onEvent: Called, outside any lock, for each ``CacheEvent``. Defaults to `nil`.
    /// - Throws: ``StashError`` with ``StashError/Code/invalidArgument`` for a negative memory
    ///   limit, and as ``DiskCache/init(directory:configuration:)`` when the disk tier cannot be
    ///   opened.
    /// - Complexity: O(1) in the number of entries.
    public convenience init(
        directory: URL, sizeLimit: ByteCount = .megabytes(150),
        memoryCostLimit: Int = MemoryCache<CacheKey, Value>.defaultCostLimit, memoryCountLimit: Int = .max,
        memoryEvictionPolicy: MemoryEvictionPolicy = .adaptive,
        codec: some ValueCodec<Value>, cost: (@Sendable (Value) -> Int)? = nil,
        onEvent: (@Sendable (CacheEvent) -> Void)? = nil
    ) throws {
        guard memoryCostLimit >= 0, memoryCountLimit >= 0 else {
            throw StashError(
                .invalidArgument,
                "Invalid Cache limits for \(directory.path): memoryCostLimit (\(memoryCostLimit)) and "
                    + "memoryCountLimit (\(memoryCountLimit)) must not be negative.")
        }
        let disk = try DiskCache(directory: directory, sizeLimit: sizeLimit)
        let memory = MemoryCache<CacheKey, Value>(
            costLimit: memoryCostLimit, countLimit: memoryCountLimit, policy: memoryEvictionPolicy,
            cost: cost ?? Self.defaultCost)
        self.init(disk: disk, memory: memory, codec: codec, onEvent: onEvent)
    }

    /// Byte counts for `Data` and `String`; `nil` (a cost of 1) for other types.
    static var defaultCost: (@Sendable (Value) -> Int)? {
        if Value.self == Data.self { return { ($0 as? Data)?.count ?? 1 } }
        if Value.self == String.self { return { ($0 as? String)?.utf8.count ?? 1 } }
        return nil
    }

    // MARK: - Reading

    /// The value stored under `key`, from memory if it is there, else from disk (then promoted
    /// to memory), else `nil`.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: The value, or `nil` on a miss — including when the bytes on disk cannot be
    ///   decoded, in which case the entry is removed and reported (see ``CacheEvent``).
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key, and as
    ///   ``DiskCache/data(forKey:)-1dnpb`` when the disk cannot be read.
    /// - Complexity: O(*k*) in the key's length on a memory hit; otherwise as
    ///   ``DiskCache/data(forKey:)-1dnpb`` plus decoding.
    /// - Important: Blocks on file I/O when memory misses. From Swift concurrency, use the
    ///   `async` variant.
    @inlinable
    public func value(forKey key: String) throws -> Value? {
        try Self.validate(key: key)
        let memoryKey = CacheKey(key)
        if let value = memoryHit(memoryKey) { return value }
        return try readFromDisk(key: key, memoryKey: memoryKey)
    }

    /// The value stored under `key` and the tier that served it, or `nil` on a miss.
    ///
    /// Works like ``value(forKey:)-ukax``; the tier says whether the value came from memory or was
    /// read from disk (and is now in memory).
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: The value and its tier, or `nil` on a miss.
    /// - Throws: As ``value(forKey:)-ukax``.
    /// - Complexity: As ``value(forKey:)-ukax``.
    /// - Important: Blocks on file I/O when memory misses.
    @inlinable
    public func valueAndTier(forKey key: String) throws -> (value: Value, tier: CacheTier)? {
        try Self.validate(key: key)
        let memoryKey = CacheKey(key)
        if let value = memoryHit(memoryKey) { return (value, .memory) }
        return try readFromDisk(key: key, memoryKey: memoryKey).map { ($0, .disk) }
    }

    /// Whether a value is stored under `key` in either tier, without reading or decoding it and
    /// without counting a hit or a miss.
    ///
    /// A value on disk that cannot be decoded still counts as stored here, though
    /// ``value(forKey:)-ukax`` returns `nil` for it.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: `true` if memory holds a live value or the disk a live entry.
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key, or when the
    ///   disk index cannot be read.
    /// - Complexity: O(1) on a memory hit, else O(log *N*) for *N* entries on disk.
    /// - Important: Blocks on database I/O when memory misses.
    @inlinable
    public func containsValue(forKey key: String) throws -> Bool {
        try Self.validate(key: key)
        return try memory.containsValue(forKey: CacheKey(key)) || disk.containsData(forKey: key)
    }

    /// Counters of the cache and of each tier.
    ///
    /// - Complexity: O(1).
    public var statistics: CacheStatistics {
        var statistics = counters.withLock { $0 }
        statistics.memoryHits += memory.reportedHitCount
        statistics.memory = memory.statistics
        statistics.disk = disk.statistics
        return statistics
    }

    /// The value for `key` in memory, counted as a memory hit here and as a hit for the disk
    /// tier's eviction policy.
    ///
    /// The memory tier counts the hit in the entry, under the lock it takes anyway; the counts
    /// reach the disk tier (``DiskCache/recordHit(forKey:)``'s batch form) in bulk: when a
    /// shard has collected many entries' hits, within the disk's
    /// ``DiskCache/Configuration/accessFlushDelay`` of the first one, and before this cache
    /// writes to the disk (so that its eviction sees them). Inlinable, with
    /// ``value(forKey:)``, so that a memory hit runs code specialized for the client's `Value`;
    /// the hand-over stays out of line.
    @inlinable
    func memoryHit(_ key: CacheKey) -> Value? {
        var report = MemoryCache<CacheKey, Value>.HitReport.none
        guard let value = memory.value(forKey: key, reportingHit: &report) else { return nil }
        switch report {
        case .none: break
        case .first: scheduleHitForwarding()
        case .full: forwardMemoryHits()
        }
        return value
    }

    /// Hands the memory tier's reported hits to the disk tier.
    @usableFromInline
    func forwardMemoryHits() {
        let hits = memory.takeReportedHits()
        guard !hits.isEmpty else { return }
        disk.recordHits(hits.map { (key: $0.key.string, hits: $0.hits) })
    }

    /// Hands the reported hits over within the disk's access flush delay, unless that is
    /// already scheduled.
    @usableFromInline
    func scheduleHitForwarding() {
        let isNew = isForwardingHits.withLock { isScheduled in
            defer { isScheduled = true }
            return !isScheduled
        }
        guard isNew else { return }
        let delay = disk.configuration.accessFlushDelay
        let nanoseconds = delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [weak self] in
            guard let self else { return }
            self.isForwardingHits.withLock { $0 = false }
            self.forwardMemoryHits()
        }
    }

    /// Hands pending memory hits to the disk tier before a write that may make it evict.
    func forwardMemoryHitsBeforeWriting() {
        guard isForwardingHits.withLock({ $0 }) else { return }
        forwardMemoryHits()
    }

    /// Throws ``StashError/Code/invalidKey`` for a key that neither tier accepts.
    @usableFromInline
    static func validate(key: String) throws {
        try DiskCache.validate(key: key)
    }
}
