import Foundation
import Stash

extension ResourceLoader {
    /// One request: the memory tier, then the disk cache (as the policy allows), then a shared
    /// transfer; a body delivered as data is then kept in memory.
    func load(_ request: ResourceRequest, delivery: Delivery, waiter: Waiter) async throws -> ResourceResponse {
        let (url, key) = try resolve(request)
        let policy = request.cachePolicy ?? configuration.cachePolicy
        if delivery == .data, policy != .reload,
            let hit = memoryHit(key: key, policy: policy, request: request.urlRequest)
        {
            counters.withLock { $0.memoryHits += 1 }
            logger.debug("Memory hit", metadata: ["key": "\(key)"])
            finishProgress(of: waiter, size: hit.data?.count ?? 0)
            return hit
        }
        let memoryKey = CacheKey(key)
        versions.hold(memoryKey)
        defer { versions.release(memoryKey) }
        let loaded = try await loadStored(
            request, url: url, key: key, policy: policy, delivery: delivery, waiter: waiter)
        if delivery == .data { await promote(loaded) }
        return loaded.response
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
        _ request: ResourceRequest, url: URL, key: String, policy: CachePolicy, delivery: Delivery, waiter: Waiter
    ) async throws -> Loaded {
        // Twice: an entry can be evicted between being stored (or found) and being read.
        for _ in 0..<2 {
            if policy != .reload {
                let version = versions.version(of: CacheKey(key))
                if let hit = try await cachedResponse(request, url: url, key: key, policy: policy, delivery: delivery) {
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

    /// The stored response for `key` if the policy lets it be used without the network: fresh,
    /// or within a stale-while-revalidate window (then revalidated in the background), and
    /// matching the request's `Vary`ing headers.
    private func cachedResponse(
        _ request: ResourceRequest, url: URL, key: String, policy: CachePolicy, delivery: Delivery
    ) async throws -> (response: ResourceResponse, attributes: DiskCache.Attributes)? {
        guard let attributes = try await liveAttributes(forKey: key),
            HTTPFreshness.matchesVary(attributes.metadata, request: request.urlRequest)
        else { return nil }
        var source = ResourceResponse.Source.disk
        let now = configuration.clock()
        if policy == .http && !HTTPFreshness.isFresh(attributes.metadata, at: now) {
            guard
                HTTPFreshness.mayServeWhileRevalidating(
                    attributes.metadata, at: now, window: configuration.staleWhileRevalidate,
                    maximumStaleness: configuration.maximumStaleness)
            else { return nil }
            source = .stale
        }
        guard let body = try await read(key, delivery: delivery) else { return nil }
        if source == .stale { revalidateInBackground(request, url: url, key: key) }
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
