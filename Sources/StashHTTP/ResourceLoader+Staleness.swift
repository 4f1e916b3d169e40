import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// The key that coalesces transfers: the cache key, plus the request's headers when it sets
    /// any, so that requests a `Vary` response could answer differently never share one body.
    func transferKey(_ request: ResourceRequest, key: String) -> String {
        guard let headers = request.urlRequest.allHTTPHeaderFields, !headers.isEmpty else { return key }
        let lines = headers.map { $0.key.lowercased() + ": " + $0.value }.sorted()
        return key + "\n" + lines.joined(separator: "\n")
    }

    /// Revalidates `key` in a background transfer, coalesced with any transfer of the key under
    /// way, after a stale-while-revalidate serve.
    ///
    /// Its end is reported like any transfer's (``Event/finished(key:outcome:)``); a failure is
    /// logged and leaves the stored entry as it was.
    func revalidateInBackground(_ request: ResourceRequest, url: URL, key: String) {
        counters.withLock { $0.backgroundRevalidations += 1 }
        logger.debug("Serving stale while revalidating", metadata: ["key": "\(key)"])
        let waiter = Waiter(priority: .low)
        let transferKey = transferKey(request, key: key)
        backgroundTasks.run {
            do {
                _ = try await self.coordinator.load(
                    key: transferKey, waiter: waiter, cancellationError: self.cancellation(of: url)
                ) {
                    transfer in
                    try await self.runTransfer(transfer, key: key, request: request, url: url, policy: .http)
                }
            } catch {
                // Tolerated: the caller already has the stale body, and the next request tries again.
                self.logger.debug(
                    "Background revalidation failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
    }

    /// Waits until the revalidations that stale-while-revalidate serves started in the
    /// background have ended.
    ///
    /// A command-line tool calls it before exiting, so that the revalidation is not lost; a
    /// test, before it checks what the next request gets.
    ///
    /// - Complexity: O(*b*) for *b* background revalidations under way, plus their duration.
    public func waitForBackgroundRevalidations() async {
        await backgroundTasks.waitForAll()
    }

    /// The stale entry `stored` as the result of a transfer that failed with `error`, when the
    /// policy and the entry's headers allow serving it (stale-if-error).
    func staleOnError(_ error: StashError, stored: DiskCache.Attributes?, key: String, policy: CachePolicy)
        -> (LoadResult, TransferOutcome)?
    {
        guard policy == .http, let stored, storedFailure(stored.metadata, url: nil) == nil,
            let response = HTTPFreshness.storedResponse(stored.metadata),
            // An app's offline copy (private kind) may be a `no-cache` response, as documented for
            // `maximumStaleness`; a shared cache follows RFC 9111 §4.2.4 to the letter (no
            // `no-cache`, `proxy-revalidate` or `s-maxage` response served stale).
            configuration.cacheKind == .private || httpPolicy.mayServeStale(response),
            HTTPFreshness.mayServeStaleOnError(
                stored.metadata, at: configuration.clock(), maximumStaleness: configuration.maximumStaleness)
        else { return nil }
        logger.debug("Serving stale: the origin failed", metadata: ["key": "\(key)", "error": "\(error)"])
        let version = versions.version(of: CacheKey(key))
        let result = LoadResult(metadata: stored.metadata, source: .stale, version: version, originFailure: error)
        return (result, .servedStale(error.code))
    }
}
