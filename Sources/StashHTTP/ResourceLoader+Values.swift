import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// A typed front end that loads resources as decoded values, with its own memory tier of
    /// decoded values in front of this loader's disk cache.
    ///
    /// Keep one per value type (or per differently configured codec):
    ///
    /// ```swift
    /// let photos = loader.values(codec: .json(Photo.self), memoryCountLimit: 500)
    /// let photo = try await photos.value(for: url)
    /// ```
    ///
    /// - Parameters:
    ///   - codec: Decodes response bodies. It must accept the bytes the server sends (and never
    ///     re-encodes them: the disk keeps the response as received).
    ///   - memoryCostLimit: The most that the decoded values in memory may cost together.
    ///     Defaults to `MemoryCache.defaultCostLimit`.
    ///   - memoryCountLimit: The most decoded values kept in memory. Defaults to 1000.
    ///   - cost: A value's cost in memory. Defaults to `nil`: bytes for `Data` and `String`
    ///     values, 1 for any other value.
    /// - Returns: A new front end; values it decodes are not shared with other front ends.
    /// - Precondition: The limits are not negative.
    /// - Complexity: O(1).
    public func values<Value: Sendable>(
        codec: some ValueCodec<Value>, memoryCostLimit: Int = MemoryCache<CacheKey, Value>.defaultCostLimit,
        memoryCountLimit: Int = 1000, cost: (@Sendable (Value) -> Int)? = nil
    ) -> ValueLoader<Value> {
        ValueLoader(
            loader: self,
            tier: makeValueTier(
                codec: codec, memoryCostLimit: memoryCostLimit, memoryCountLimit: memoryCountLimit, cost: cost))
    }

    /// The value that the body of `url` decodes to: from the memory tier of decoded values, else
    /// from the disk cache (decoded, then kept in memory), else from the network (stored on disk,
    /// then decoded once).
    ///
    /// The loader keeps one memory tier of decoded values per codec type, made with the default
    /// limits of ``values(codec:memoryCostLimit:memoryCountLimit:cost:)`` and the first codec of
    /// that type it is given. For other limits, or codecs of one type configured differently
    /// (two `JSONDecoder` date strategies, say), keep a ``ValueLoader`` from
    /// ``values(codec:memoryCostLimit:memoryCountLimit:cost:)`` instead.
    ///
    /// - Parameters:
    ///   - url: The resource.
    ///   - codec: Decodes the body, such as `.json(Photo.self)`.
    ///   - cachePolicy: How to use the cache; `nil` for ``Configuration/cachePolicy``.
    ///   - priority: Where the transfer queues, if one is needed.
    /// - Throws: `StashError` with `StashError.Code.decodingFailed` when the body
    ///   cannot be decoded (see ``ValueLoader``), or as ``response(for:delivery:)``.
    /// - Complexity: O(*k*) in the key's length for a memory hit (plus an O(log *N*) index lookup
    ///   under ``CachePolicy/http``); otherwise as ``data(for:cachePolicy:priority:)-(URL,_,_)`` plus decoding.
    public func value<Value: Sendable>(
        for url: URL, codec: some ValueCodec<Value>, cachePolicy: CachePolicy? = nil, priority: Priority = .normal
    ) async throws -> Value {
        try await value(for: ResourceRequest(url, cachePolicy: cachePolicy, priority: priority), codec: codec)
    }

    /// The value that the body of `request` decodes to.
    ///
    /// - Throws: As `value(for:codec:cachePolicy:priority:)`.
    /// - Complexity: As `value(for:codec:cachePolicy:priority:)`.
    public func value<Value: Sendable>(
        for request: URLRequest, codec: some ValueCodec<Value>, cachePolicy: CachePolicy? = nil,
        priority: Priority = .normal
    ) async throws -> Value {
        try await value(for: ResourceRequest(request, cachePolicy: cachePolicy, priority: priority), codec: codec)
    }

    /// The value that the body of `request`, with its cache key, variant, policy and priority,
    /// decodes to.
    ///
    /// - Throws: As `value(for:codec:cachePolicy:priority:)`.
    /// - Complexity: As `value(for:codec:cachePolicy:priority:)`.
    public func value<Value: Sendable>(for request: ResourceRequest, codec: some ValueCodec<Value>) async throws
        -> Value
    {
        let tier = valueTiers.defaultTier(for: type(of: codec)) {
            makeValueTier(
                codec: codec, memoryCostLimit: MemoryCache<CacheKey, Value>.defaultCostLimit, memoryCountLimit: 1000,
                cost: nil, registers: false)
        }
        return try await loadValue(request, tier: tier).value
    }

    /// A memory tier of decoded values in front of this loader's disk cache, told about every
    /// entry the loader's transfers replace (unless `registers` is `false`: the caller registers it).
    private func makeValueTier<Value: Sendable>(
        codec: some ValueCodec<Value>, memoryCostLimit: Int, memoryCountLimit: Int, cost: (@Sendable (Value) -> Int)?,
        registers: Bool = true
    ) -> ValueTier<Value> {
        let logger = self.logger
        let values = Cache(
            disk: cache, codec: codec, cost: cost,
            onEvent: { event in logger.warning("Decoded-value cache: \(event)") })
        values.memory.costLimit = memoryCostLimit
        values.memory.countLimit = memoryCountLimit
        if registers { valueTiers.register(values) }
        return ValueTier(cache: values, codec: codec)
    }

    /// One typed request: decoded values in memory, then bytes on disk (both only while the
    /// policy allows), then the network through ``loadStored(_:url:key:policy:delivery:waiter:prefetched:)``.
    func loadValue<Value: Sendable>(_ request: ResourceRequest, tier: ValueTier<Value>) async throws
        -> (value: Value, source: ResourceResponse.Source)
    {
        let (url, key) = try resolve(request)
        let policy = request.cachePolicy ?? configuration.cachePolicy
        if policy != .reload, try await mayServeStoredCopy(request, key: key, policy: policy),
            let (value, cacheTier) = try await tier.cache.valueAndTier(forKey: key)
        {
            counters.withLock { stats in
                if cacheTier == .memory { stats.memoryHits += 1 } else { stats.diskHits += 1 }
            }
            logger.debug(
                cacheTier == .memory ? "Memory hit" : "Disk hit", metadata: ["key": "\(key)", "decoded": "true"])
            return (value, cacheTier == .memory ? .memory : .disk)
        }
        let memoryKey = CacheKey(key)
        versions.hold(memoryKey)
        defer { versions.release(memoryKey) }
        let loaded = try await loadStored(
            request, url: url, key: key, policy: policy, delivery: .data, waiter: Waiter(priority: request.priority))
        guard let data = loaded.response.data else { preconditionFailure("a .data delivery delivered a file") }
        let value: Value
        do {
            value = try tier.codec.decode(data)
        } catch {
            throw await decodingFailure(error, of: loaded, url: url, valueType: Value.self, codec: tier.codec)
        }
        await keep(value, from: loaded, in: tier.cache)
        return (value, loaded.response.source)
    }

    /// Whether a stored copy (decoded in memory, or bytes on disk) may be served without the
    /// network: always, except under ``CachePolicy/http``, where the disk entry must be fresh.
    ///
    /// Memory holds decoded values without their metadata, so `.http` asks the disk index (no
    /// body is read); an entry gone from disk is not fresh.
    private func mayServeStoredCopy(_ request: ResourceRequest, key: String, policy: CachePolicy) async throws -> Bool {
        guard policy == .http else { return true }
        guard let attributes = try await liveAttributes(forKey: key) else { return false }
        switch httpReuse(attributes.metadata, request: request.urlRequest, now: configuration.clock()) {
        case .fresh, .stale: return true
        case .revalidate, .unusable, .onlyIfCachedMiss: return false
        }
    }

    /// Keeps a value just decoded from `loaded` in memory, unless the loader wrote the entry since.
    ///
    /// The requests that shared one transfer all decode the same version: one of them keeps it.
    /// Were they all to promote at once, the cache would see overlapping promotions of one key,
    /// could not tell which is newer, and would keep none.
    private func keep<Value: Sendable>(_ value: Value, from loaded: Loaded, in values: Cache<Value>) async {
        let key = loaded.response.cacheKey
        let memoryKey = CacheKey(key)
        guard loaded.isStored else { return }
        let token = KeptValue(key: memoryKey, version: loaded.version, tier: ObjectIdentifier(values))
        guard valuesBeingKept.withLock({ $0.insert(token).inserted }) else { return }
        defer { _ = valuesBeingKept.withLock { $0.remove(token) } }
        await configuration.willKeepInMemory?(key)
        guard versions.isCurrent(memoryKey, loaded.version),
            let attributes = await attributes(of: loaded), let timeToLive = memoryTimeToLive(attributes),
            versions.isCurrent(memoryKey, loaded.version)
        else { return }
        values.promote(value, forKey: key, timeToLive: timeToLive.duration)
        if !versions.isCurrent(memoryKey, loaded.version) {
            // A write of the key began while the value was being kept: it may be older than disk's.
            values.removeFromMemory(forKey: key)
        }
    }

    /// Counts a body that could not be decoded, removes it from the cache (if it is still the
    /// entry that was decoded), and describes the failure.
    ///
    /// Removing it keeps one rule for both tiers: bytes that do not decode are never a hit. Left
    /// on disk, they would fail the next read again (and be removed by the `Cache`
    /// then); removed, the next request fetches them again, so a server that fixed its response
    /// is picked up at once.
    private func decodingFailure<Value>(
        _ error: any Error, of loaded: Loaded, url: URL, valueType: Value.Type, codec: any ValueCodec<Value>
    ) async -> StashError {
        counters.withLock { $0.decodingFailures += 1 }
        let key = loaded.response.cacheKey
        let memoryKey = CacheKey(key)
        var outcome = "it was not cached"
        if loaded.isStored {
            outcome = "the cache has a newer entry for it"
            if versions.beginWrite(memoryKey, ifVersion: loaded.version) {
                do {
                    try await cache.removeData(forKey: key)
                    outcome = "it was removed from the cache, so the next request fetches it again"
                } catch {
                    // Tolerated: the request fails with the decoding error either way, and the
                    // cache removes the bytes itself when a later read fails to decode them.
                    outcome = "it could not be removed from the cache (\(error))"
                    logger.warning(
                        "Undecodable body could not be removed", metadata: ["key": "\(key)", "error": "\(error)"])
                }
                invalidateMemory(forKey: key, bytesChanged: true)
                versions.endWrite(memoryKey)
            }
        }
        let size = loaded.response.data?.count ?? 0
        logger.debug("Body not decodable", metadata: ["key": "\(key)", "error": "\(error)"])
        return StashError(
            .decodingFailed,
            "The \(size)-byte body of \(url.absoluteString) (\(sourceDescription(loaded.response.source))) is not a "
                + "valid \(Value.self) for \(type(of: codec)); \(outcome). Check the server's response and the codec.",
            cause: error)
    }

    private func sourceDescription(_ source: ResourceResponse.Source) -> String {
        switch source {
        case .memory: "from memory"
        case .disk: "from the disk cache"
        case .network: "from the network"
        case .revalidated: "from the disk cache, revalidated"
        case .stale: "from the disk cache, stale"
        case .shared: "from the shared tier"
        }
    }
}

/// One decoded value being kept in memory: its key, the entry's version, and the tier.
struct KeptValue: Hashable, Sendable {
    var key: CacheKey
    var version: UInt64
    var tier: ObjectIdentifier
}
