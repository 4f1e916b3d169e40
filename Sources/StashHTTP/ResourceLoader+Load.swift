import Foundation
import Stash

extension ResourceLoader {
    /// One request: the memory tier, then the disk cache (as the policy allows), then a shared
    /// transfer; a body delivered as data is then kept in memory.
    ///
    /// A request whose stored response has a `Vary` it does not match goes to its own variant's
    /// entry. Methods other than `GET` are never answered from or stored in the cache (`HEAD` is
    /// answered from a stored `GET`); see ``loadOtherMethod(_:method:url:key:policy:delivery:)``.
    func load(_ request: ResourceRequest, delivery: Delivery, waiter: Waiter) async throws -> ResourceResponse {
        let (url, baseKey) = try resolve(request)
        var policy = request.cachePolicy ?? configuration.cachePolicy
        let method = (request.urlRequest.httpMethod ?? "GET").uppercased()
        if method != "GET" {
            return try await loadOtherMethod(
                request, method: method, url: url, key: baseKey, policy: policy, delivery: delivery)
        }
        var seen: DiskCache.Metadata?
        if delivery == .data, policy != .reload,
            let hit = memoryHit(key: baseKey, policy: policy, request: request.urlRequest, seen: &seen)
        {
            return memoryResponse(hit, key: baseKey, waiter: waiter)
        }
        let baseMemoryKey = CacheKey(baseKey)
        versions.hold(baseMemoryKey)
        defer { versions.release(baseMemoryKey) }
        var key = baseKey
        var prefetched: Prefetched?
        if seen == nil {
            let version = versions.version(of: baseMemoryKey)
            let attributes = try await liveAttributes(forKey: baseKey)
            prefetched = Prefetched(attributes: attributes, version: version)
            seen = attributes?.metadata
        }
        if let seen, let variant = variantKey(forBase: baseKey, metadata: seen, request: request.urlRequest) {
            key = variant.key
            prefetched = nil
            // An unlisted variant entry may predate an invalidation of the URL: fetch it anew.
            if !variant.isListed && policy != .cacheOnly { policy = .reload }
            var ignored: DiskCache.Metadata?
            if delivery == .data, policy != .reload,
                let hit = memoryHit(key: key, policy: policy, request: request.urlRequest, seen: &ignored)
            {
                return memoryResponse(hit, key: key, waiter: waiter)
            }
        }
        let memoryKey = CacheKey(key)
        versions.hold(memoryKey)
        defer { versions.release(memoryKey) }
        let loaded = try await loadStored(
            request, url: url, key: key, policy: policy, delivery: delivery, waiter: waiter, prefetched: prefetched)
        if delivery == .data { await promote(loaded) }
        return withAge(loaded.response)
    }

    /// The disk attributes of a key read before ``loadStored(_:url:key:policy:delivery:waiter:prefetched:)``,
    /// with the key's version when they were read.
    struct Prefetched {
        var attributes: DiskCache.Attributes?
        var version: UInt64
    }

    private func memoryResponse(_ hit: ResourceResponse, key: String, waiter: Waiter) -> ResourceResponse {
        counters.withLock { stats in
            stats.memoryHits += 1
            if hit.source == .stale { stats.staleServes += 1 }
        }
        logger.debug("Memory hit", metadata: ["key": "\(key)"])
        finishProgress(of: waiter, size: hit.data?.count ?? 0)
        return withAge(hit)
    }

    /// The URL and cache key of `request`.
    ///
    /// - Throws: `StashError` when the request has no URL or its key is empty.
    func resolve(_ request: ResourceRequest) throws -> (url: URL, key: String) {
        guard let url = request.url else {
            throw StashError(.invalidArgument, "A ResourceRequest needs a URL, but its URLRequest has none.")
        }
        let key = cacheKey(for: request)
        guard !key.isEmpty else {
            throw StashError(
                .invalidKey, "The cache key for \(url.absoluteString) is empty: fix the cacheKey function.")
        }
        return (url, key)
    }

    /// The disk cache (as the policy allows), then a shared transfer.
    ///
    /// The caller holds `key` in ``versions``, so that the version it returns stays comparable.
    func loadStored(
        _ request: ResourceRequest, url: URL, key: String, policy: CachePolicy, delivery: Delivery, waiter: Waiter,
        prefetched: Prefetched? = nil
    ) async throws -> Loaded {
        var prefetched = prefetched
        // Twice: an entry can be evicted between being stored (or found) and being read.
        for _ in 0..<2 {
            if policy != .reload {
                let version = prefetched?.version ?? versions.version(of: CacheKey(key))
                let attributes = prefetched.map { Optional.some($0.attributes) } ?? nil
                prefetched = nil
                if let hit = try await cachedResponse(
                    request, url: url, key: key, policy: policy, delivery: delivery, attributes: attributes)
                {
                    counters.withLock { stats in
                        stats.diskHits += 1
                        if hit.response.source == .stale { stats.staleServes += 1 }
                    }
                    logger.debug("Disk hit", metadata: ["key": "\(key)"])
                    finishProgress(of: waiter, size: hit.attributes.size)
                    return Loaded(response: hit.response, version: version, isStored: true, attributes: hit.attributes)
                }
            }
            try checkCancellation(url)
            if policy == .cacheOnly {
                throw StashError(
                    .notFound,
                    "\(url.absoluteString) (key '\(key)') is not in the cache, and the cache policy is .cacheOnly: load it online first, or use .cacheFirst."
                )
            }
            if policy == .http, HTTPCacheControl(HTTPFields(request.urlRequest)).onlyIfCached {
                throw onlyIfCachedMiss(url, key: key)
            }
            let result = try await coordinator.load(
                key: transferKey(request, key: key), waiter: waiter, wantsFile: delivery == .file,
                cancellationError: cancellation(of: url)
            ) { transfer in
                try await self.runTransfer(transfer, key: key, request: request, url: url, policy: policy)
            }
            if let response = try await deliver(result, key: key, url: url, delivery: delivery) {
                counters.withLock { stats in
                    switch result.source {
                    case .disk: stats.diskHits += 1
                    case .stale: stats.staleServes += 1
                    case .shared: break
                    default: stats.networkLoads += 1
                    }
                }
                return Loaded(response: response, version: result.version, isStored: result.unstoredReason == nil)
            }
            try checkCancellation(url)
        }
        throw StashError(
            .notFound,
            "\(url.absoluteString) (key '\(key)') was evicted from the disk cache as soon as it was stored, twice: raise the cache's sizeLimit, or choose an eviction policy without admission (.leastRecentlyUsed)."
        )
    }

    /// The stored response for `key` if the policy lets it be used without the network: under
    /// ``CachePolicy/http``, what RFC 9111 §4 allows for the request (fresh, or stale within the
    /// request's `max-stale`), or a stale entry within a stale-while-revalidate window (then
    /// revalidated in the background); otherwise any entry matching the request's `Vary`ing headers.
    ///
    /// - Parameter attributes: The entry's attributes if already read (`.some(nil)`: absent).
    /// - Throws: The only-if-cached error when the request has `only-if-cached` and the entry
    ///   cannot answer it; the disk cache's errors.
    func cachedResponse(
        _ request: ResourceRequest, url: URL, key: String, policy: CachePolicy, delivery: Delivery,
        attributes prefetched: DiskCache.Attributes?? = nil
    ) async throws -> (response: ResourceResponse, attributes: DiskCache.Attributes)? {
        let found: DiskCache.Attributes?
        // A disk hit delivered as data is one read of the disk tier: the attributes with the bytes.
        var bytes: Data?
        if let prefetched {
            found = prefetched
        } else if delivery == .data {
            let entry = try await cache.attributesAndData(forKey: key)
            found = entry?.attributes
            bytes = entry?.data
        } else {
            found = try await liveAttributes(forKey: key)
        }
        guard let attributes = found else { return nil }
        var source = ResourceResponse.Source.disk
        var revalidates = false
        if policy == .http {
            let now = configuration.clock()
            switch httpReuse(attributes.metadata, request: request.urlRequest, now: now) {
            case .fresh: break
            case .stale: source = .stale
            case .unusable: return nil
            case .onlyIfCachedMiss: throw onlyIfCachedMiss(url, key: key)
            case .revalidate:
                guard requestAcceptsStaleWhileRevalidating(request.urlRequest),
                    let stored = HTTPFreshness.storedResponse(attributes.metadata), httpPolicy.mayServeStale(stored),
                    HTTPFreshness.mayServeWhileRevalidating(
                        attributes.metadata, at: now, window: configuration.staleWhileRevalidate,
                        maximumStaleness: configuration.maximumStaleness)
                else { return nil }
                source = .stale
                revalidates = true
            }
        } else if !HTTPFreshness.matchesVary(attributes.metadata, request: request.urlRequest) {
            return nil
        }
        if let failure = storedFailure(attributes.metadata, url: url) {
            // A stored error status answers as the origin did; never stale while revalidating.
            if revalidates { return nil }
            throw failure
        }
        let read: ResourceResponse.Body? =
            if let bytes { .data(bytes) } else { try await read(key, delivery: delivery) }
        guard let body = read else { return nil }
        if revalidates { revalidateInBackground(request, url: url, key: key) }
        return (ResourceResponse(body: body, cacheKey: key, metadata: attributes.metadata, source: source), attributes)
    }

    /// The attributes of a present entry, or `nil` when there is none or the disk cache's own
    /// time-to-live has expired it.
    func liveAttributes(forKey key: String) async throws -> DiskCache.Attributes? {
        guard let attributes = try await cache.attributes(forKey: key) else { return nil }
        if !attributes.isPinned, let expires = attributes.expires, expires <= cache.configuration.clock() {
            return nil
        }
        return attributes
    }

    private func read(_ key: String, delivery: Delivery) async throws -> ResourceResponse.Body? {
        switch delivery {
        case .data: try await cache.data(forKey: key).map { .data($0) }
        case .file: try await cache.fileURL(forKey: key).map { .file($0) }
        }
    }

    /// What a finished transfer gives one request, or `nil` when the stored entry vanished.
    private func deliver(_ result: LoadResult, key: String, url: URL, delivery: Delivery) async throws
        -> ResourceResponse?
    {
        let body: ResourceResponse.Body
        switch delivery {
        case .data:
            if let data = result.data {
                body = .data(data)
            } else if let data = try await cache.data(forKey: key) {
                body = .data(data)
            } else if let retained = result.retainedBody {
                // The policy evicted the entry at once (an admission filter refusing a
                // newcomer): the caller still gets the body it waited for, without a download.
                body = .data(try retained.data())
            } else {
                return nil
            }
        case .file:
            if let reason = result.unstoredReason { throw reason }
            guard let file = try await cache.fileURL(forKey: key) else { return nil }
            body = .file(file)
        }
        return ResourceResponse(
            body: body, cacheKey: key, metadata: result.metadata, source: result.source,
            originFailure: result.originFailure)
    }

    func finishProgress(of waiter: Waiter, size: Int) {
        waiter.progress?.yield(TransferProgress(bytesReceived: size, bytesExpected: size))
    }

    func cancellation(of url: URL) -> StashError {
        StashError(.cancelled, "Loading \(url.absoluteString) was cancelled.", cause: CancellationError())
    }

    func checkCancellation(_ url: URL) throws {
        if Task.isCancelled { throw cancellation(of: url) }
    }
}
