import Foundation
import Stash

extension ResourceLoader {
    /// One request: the disk cache first (as the policy allows), then a shared transfer.
    func load(_ request: ResourceRequest, delivery: Delivery, waiter: Waiter) async throws -> ResourceResponse {
        guard let url = request.url else {
            throw StashError(.invalidArgument, "A ResourceRequest needs a URL, but its URLRequest has none.")
        }
        let key = cacheKey(for: request)
        guard !key.isEmpty else {
            throw StashError(
                .invalidKey, "The cache key for \(url.absoluteString) is empty: fix the cacheKey function.")
        }
        let policy = request.cachePolicy ?? configuration.cachePolicy
        // Twice: an entry can be evicted between being stored (or found) and being read.
        for _ in 0..<2 {
            if policy != .reload, let hit = try await cachedResponse(key: key, policy: policy, delivery: delivery) {
                counters.withLock { $0.diskHits += 1 }
                logger.debug("Disk hit", metadata: ["key": "\(key)"])
                finishProgress(of: waiter, size: hit.size)
                return hit.response
            }
            try checkCancellation(url)
            if policy == .cacheOnly {
                throw StashError(
                    .notFound,
                    "\(url.absoluteString) (key '\(key)') is not in the cache, and the cache policy is .cacheOnly: load it online first, or use .cacheFirst."
                )
            }
            let result = try await coordinator.load(
                key: key, waiter: waiter, cancellationError: cancellation(of: url)
            ) { transfer in
                try await self.runTransfer(transfer, request: request, url: url, policy: policy)
            }
            if let response = try await deliver(result, key: key, url: url, delivery: delivery) {
                counters.withLock { stats in
                    if result.source == .disk { stats.diskHits += 1 } else { stats.networkLoads += 1 }
                }
                return response
            }
            try checkCancellation(url)
        }
        throw StashError(
            .notFound,
            "\(url.absoluteString) (key '\(key)') was evicted from the disk cache as soon as it was stored: raise the cache's sizeLimit."
        )
    }

    /// The stored response for `key` if the policy lets it be used without the network.
    private func cachedResponse(key: String, policy: CachePolicy, delivery: Delivery) async throws
        -> (response: ResourceResponse, size: Int)?
    {
        guard let attributes = try await liveAttributes(forKey: key) else { return nil }
        if policy == .http && !HTTPFreshness.isFresh(attributes.metadata, at: configuration.clock()) { return nil }
        guard let body = try await read(key, delivery: delivery) else { return nil }
        return (
            ResourceResponse(body: body, cacheKey: key, metadata: attributes.metadata, source: .disk), attributes.size
        )
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
            } else {
                return nil
            }
        case .file:
            if let reason = result.unstoredReason { throw reason }
            guard let file = try await cache.fileURL(forKey: key) else { return nil }
            body = .file(file)
        }
        return ResourceResponse(body: body, cacheKey: key, metadata: result.metadata, source: result.source)
    }

    private func finishProgress(of waiter: Waiter, size: Int) {
        waiter.progress?.yield(TransferProgress(bytesReceived: size, bytesExpected: size))
    }

    func cancellation(of url: URL) -> StashError {
        StashError(.cancelled, "Loading \(url.absoluteString) was cancelled.", cause: CancellationError())
    }

    func checkCancellation(_ url: URL) throws {
        if Task.isCancelled { throw cancellation(of: url) }
    }
}
