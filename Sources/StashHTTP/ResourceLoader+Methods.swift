import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests with methods other than `GET`: `HEAD` answered from a stored `GET`, everything else
/// sent as it is, never stored, and unsafe methods invalidating what they change (RFC 9111 §4,
/// §4.4).
extension ResourceLoader {
    /// A `HEAD` or another method: `HEAD` is answered from the stored `GET` response when the
    /// policy allows (an empty body with its metadata); otherwise the request goes to the origin,
    /// its response is delivered and not stored, and a non-error response to an unsafe method
    /// removes the stored responses of its URL and of the same-origin URLs in its `Location`
    /// and `Content-Location`, from every tier.
    ///
    /// - Throws: `StashError.Code.invalidArgument` for a `.file` delivery (only `GET` responses
    ///   have cache files); the errors of a `GET` otherwise.
    func loadOtherMethod(
        _ request: ResourceRequest, method: String, url: URL, key: String, policy: CachePolicy, delivery: Delivery
    ) async throws -> ResourceResponse {
        guard delivery == .data else {
            throw StashError(
                .invalidArgument,
                "\(method) \(url.absoluteString): only GET responses are cached, so a \(method) request has no cache file: use data(for:) or response(for:delivery: .data)."
            )
        }
        if method == "HEAD", policy != .reload {
            var get = request
            get.urlRequest.httpMethod = "GET"
            if let hit = try await cachedResponse(get, url: url, key: key, policy: policy, delivery: .file) {
                counters.withLock { $0.diskHits += 1 }
                var response = hit.response
                response.body = .data(Data())
                return withAge(response)
            }
            if policy == .cacheOnly {
                throw StashError(
                    .notFound,
                    "HEAD \(url.absoluteString) (key '\(key)'): no stored GET response, and the cache policy is .cacheOnly: load it online first."
                )
            }
            if policy == .http, HTTPCacheControl(HTTPFields(request.urlRequest)).onlyIfCached {
                throw onlyIfCachedMiss(url, key: key)
            }
        }
        return try await forward(request.urlRequest, method: method, url: url, key: key)
    }

    /// Sends `request` to the origin as it is, once (a request that is not `GET` is not retried:
    /// it may not be idempotent), and delivers its 2xx body without storing it.
    private func forward(_ request: URLRequest, method: String, url: URL, key: String) async throws
        -> ResourceResponse
    {
        let body = ForwardedBody(url: url, method: method, maximumSize: maximumForwardedSize)
        counters.withLock { $0.requests += 1 }
        logger.debug("Forwarding", metadata: ["method": "\(method)", "url": "\(url.absoluteString)"])
        let requestedAt = configuration.clock()
        let response: HTTPURLResponse
        do {
            response = try await transport.send(request, onResponse: { _ in }, onData: body.append)
        } catch {
            var failure = transportFailure(error, url: url)
            if let transient = failure as? TransientFailure { failure = transient.error }
            if var stashError = failure as? StashError {
                stashError.message = stashError.message.replacingOccurrences(of: "GET ", with: "\(method) ")
                failure = stashError
            }
            throw failure
        }
        counters.withLock { $0.bytesReceived += body.count }
        let status = response.statusCode
        if !HTTPCachePolicy.isSafe(method: method) {
            await invalidate(
                httpPolicy.invalidatedURLs(
                    method: method, requestURL: url, status: status, responseHeaders: HTTPFields(response)))
        }
        guard (200..<300).contains(status) else {
            var failure = statusFailure(response, url: url)
            if let transient = failure as? TransientFailure { failure = transient.error }
            if var stashError = failure as? StashError {
                stashError.message = stashError.message.replacingOccurrences(of: "GET ", with: "\(method) ")
                failure = stashError
            }
            throw failure
        }
        let metadata = HTTPFreshness.metadata(
            for: HTTPFreshness.Headers(response), url: response.url ?? url, status: status, requestedAt: requestedAt,
            receivedAt: configuration.clock(), kind: configuration.cacheKind)
        return ResourceResponse(body: .data(body.data), cacheKey: key, metadata: metadata, source: .network)
    }

    private var maximumForwardedSize: Int {
        configuration.maximumResponseSize?.bytes ?? 100 * 1024 * 1024
    }

    /// Removes the stored responses of `urls` (and their `Vary` variants) from the disk cache,
    /// the memory tiers and the shared tier (RFC 9111 §4.4).
    ///
    /// Failures are logged and counted, not thrown: the unsafe request itself succeeded.
    func invalidate(_ urls: [URL]) async {
        for url in urls {
            let baseKey = configuration.cacheKey(URLRequest(url: url))
            guard !baseKey.isEmpty else { continue }
            var keys = [baseKey]
            do {
                if let metadata = try await cache.attributes(forKey: baseKey)?.metadata {
                    keys += HTTPFreshness.variants(of: metadata)
                }
            } catch {
                // Tolerated: unlisted variants are fetched anew rather than served (see `variantKey`).
                logger.warning(
                    "Cannot read an entry to invalidate", metadata: ["key": "\(baseKey)", "error": "\(error)"])
            }
            for key in keys {
                let memoryKey = CacheKey(key)
                versions.beginWrite(memoryKey)
                do {
                    try await cache.removeData(forKey: key)
                    counters.withLock { $0.invalidations += 1 }
                } catch {
                    counters.withLock { $0.storeFailures += 1 }
                    logger.warning("Cannot invalidate an entry", metadata: ["key": "\(key)", "error": "\(error)"])
                }
                invalidateMemory(forKey: key, bytesChanged: true)
                versions.endWrite(memoryKey)
                guard let shared = configuration.sharedTier else { continue }
                do {
                    try await shared.removeEntry(forKey: key)
                } catch {
                    sharedTier.counters.withLock { $0.failures += 1 }
                    logger.debug("Shared tier invalidation failed", metadata: ["key": "\(key)", "error": "\(error)"])
                }
            }
        }
    }
}

/// The body of a forwarded response, collected in memory up to a limit.
// @unchecked: the transport calls `append` one chunk at a time (HTTPTransport's contract), and
// the loader reads the result only after `send` returned, which orders those accesses.
private final class ForwardedBody: @unchecked Sendable {
    private let url: URL
    private let method: String
    private let maximumSize: Int
    private(set) var data = Data()

    init(url: URL, method: String, maximumSize: Int) {
        self.url = url
        self.method = method
        self.maximumSize = maximumSize
    }

    var count: Int { data.count }

    func append(_ chunk: Data) throws {
        guard data.count + chunk.count <= maximumSize else {
            throw StashError(
                .tooLarge,
                "\(method) \(url.absoluteString): the response exceeded the maximum response size of \(ByteCount(maximumSize)); raise ResourceLoader.Configuration.maximumResponseSize to receive it."
            )
        }
        data.append(chunk)
    }
}
