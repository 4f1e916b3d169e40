import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the loader applies ``HTTPCachePolicy`` (RFC 9111): reuse decisions, the `Age` of served
/// responses, `Vary` variants, and what may reach a shared cache.
extension ResourceLoader {
    /// The loader's RFC 9111 rules, of its ``Configuration/cacheKind``.
    var httpPolicy: HTTPCachePolicy { HTTPCachePolicy(kind: configuration.cacheKind) }

    /// Whether a stored entry may answer `request` under ``CachePolicy/http`` (RFC 9111 §4), its
    /// `Vary` included; an entry the loader did not record is stale without validators.
    func httpReuse(_ metadata: DiskCache.Metadata, request: URLRequest, now: Date) -> HTTPCacheReuse {
        // The common case, without parsing: a request without directives, and a response fresh by
        // the freshness recorded when it was stored (by this loader's kind: see `localMetadata`).
        if request.value(forHTTPHeaderField: "Cache-Control") == nil,
            request.value(forHTTPHeaderField: "Pragma") == nil, HTTPFreshness.isFresh(metadata, at: now),
            HTTPFreshness.matchesVary(metadata, request: request),
            let age = HTTPFreshness.currentAge(of: metadata, at: now)
        {
            return .fresh(age: age)
        }
        let requestFields = HTTPFields(request)
        let onlyIfCached = HTTPCacheControl(requestFields).onlyIfCached
        guard HTTPFreshness.matchesVary(metadata, request: request) else {
            return onlyIfCached ? .onlyIfCachedMiss : .unusable
        }
        guard let stored = HTTPFreshness.storedResponse(metadata) else {
            return onlyIfCached ? .onlyIfCachedMiss : .revalidate(validators: HTTPFields())
        }
        return httpPolicy.reuse(method: "GET", requestHeaders: requestFields, stored: stored, now: now)
    }

    /// Whether `request` lets a stale entry be served at once while it is revalidated: it has no
    /// `Cache-Control` of its own and no `Pragma: no-cache` (RFC 9111 §5.2.1, §5.4).
    func requestAcceptsStaleWhileRevalidating(_ request: URLRequest) -> Bool {
        let fields = HTTPFields(request)
        return HTTPCacheControl(fields).directives.isEmpty && !HTTPCachePolicy.pragmaNoCache(fields)
    }

    /// The error for a request with `Cache-Control: only-if-cached` that the cache cannot answer
    /// (RFC 9111 §5.2.1.7; a proxy answers `504 Gateway Timeout`).
    func onlyIfCachedMiss(_ url: URL, key: String) -> StashError {
        StashError(
            .notFound,
            "\(url.absoluteString) (key '\(key)') has no stored response that may answer it without the network, and the request says Cache-Control: only-if-cached (a proxy would answer 504 Gateway Timeout): drop only-if-cached to let the loader fetch it."
        )
    }

    /// `response` with its current age (RFC 9111 §4.2.3) at the loader's clock, when its metadata
    /// records one.
    func withAge(_ response: ResourceResponse) -> ResourceResponse {
        var response = response
        let now = configuration.clock()
        if let age = HTTPFreshness.currentAge(of: response.metadata, at: now) {
            response.age = age
        } else if let stored = HTTPFreshness.storedResponse(response.metadata) {
            response.age = httpPolicy.currentAge(of: stored, now: now)
        }
        return response
    }

    /// `metadata` from the shared tier with its freshness (and initial age) recomputed by this
    /// loader's kind, to store locally: a private loader must not treat `s-maxage` as its own.
    func localMetadata(_ metadata: DiskCache.Metadata) -> DiskCache.Metadata {
        guard configuration.cacheKind == .private, let until = HTTPFreshness.freshUntil(metadata, kind: .private)
        else { return metadata }
        var metadata = metadata
        metadata.extra[HTTPFreshness.freshUntilKey] = String(format: "%.3f", until.timeIntervalSince1970)
        return metadata
    }

    // MARK: - Stored error statuses

    /// The error that a stored response with a status other than 2xx answers with (a `404` with
    /// explicit or heuristic freshness, RFC 9111 §3, §4.2.2), or `nil` for a stored body.
    func storedFailure(_ metadata: DiskCache.Metadata, url: URL?) -> StashError? {
        guard let status = metadata.extra[HTTPFreshness.statusKey].flatMap({ Int($0) }),
            !(200..<300).contains(status)
        else { return nil }
        let address = metadata.extra[HTTPFreshness.urlKey] ?? url?.absoluteString ?? "the resource"
        let phrase = HTTPURLResponse.localizedString(forStatusCode: status).capitalized
        return StashError(
            status == 404 || status == 410 ? .notFound : .invalidResponse,
            "GET \(address) answered \(status) \(phrase), and that answer is stored while its Cache-Control, Expires or Last-Modified keep it fresh (RFC 9111 §3): check the URL, or load it with the .reload policy to ask the server again.",
            cause: HTTPStatusError(statusCode: status, url: url ?? URL(string: address) ?? URL(fileURLWithPath: "/")))
    }

    /// Stores a final status other than 2xx that RFC 9111 lets the loader's kind store.
    ///
    /// Such as a `404` with `max-age`, or a `410` with `Last-Modified`; with an empty body, so
    /// that the same answer is given without the network while it is fresh. It replaces what the
    /// key held: it is the origin's current answer. Never reaches the shared tier.
    func storeFailureResponse(
        _ response: HTTPURLResponse, key: String, url: URL, request: ResourceRequest, requestedAt: Date
    ) async {
        let requestFields = HTTPFields(request.urlRequest)
        guard
            httpPolicy.storableHeaders(
                method: "GET", requestHeaders: requestFields, status: response.statusCode,
                responseHeaders: HTTPFields(response)) != nil
        else { return }
        let headers = HTTPFreshness.Headers(response)
        let metadata = HTTPFreshness.recordingVary(
            headers.vary, of: request.urlRequest,
            in: HTTPFreshness.metadata(
                for: headers, url: response.url ?? url, status: response.statusCode, requestedAt: requestedAt,
                receivedAt: configuration.clock(), kind: configuration.cacheKind))
        let memoryKey = CacheKey(key)
        versions.beginWrite(memoryKey)
        do {
            try await cache.store(Data(), forKey: key, metadata: metadata)
        } catch {
            // Tolerated: the caller gets the status error either way; the next request asks again.
            counters.withLock { $0.storeFailures += 1 }
            logger.warning("Could not store an error status", metadata: ["key": "\(key)", "error": "\(error)"])
        }
        invalidateMemory(forKey: key, bytesChanged: true)
        versions.endWrite(memoryKey)
        if Self.baseKey(ofVariant: key) != nil { await registerVariant(key) }
    }

    // MARK: - Shared caches

    /// Whether a shared cache may store the response to `request` (RFC 9111 §3, §3.5,
    /// §5.2.2.7): what alone may reach the ``Configuration/sharedTier``, whatever the loader's kind.
    static func sharedCacheMayStore(request: URLRequest, response: HTTPURLResponse) -> Bool {
        HTTPCachePolicy(kind: .shared).storableHeaders(
            method: "GET", requestHeaders: HTTPFields(request), status: response.statusCode,
            responseHeaders: HTTPFields(response)) != nil
    }

    /// Whether a shared loader's own tiers may keep the response to `request` under a policy
    /// other than ``CachePolicy/http`` (which keeps every 2xx): not `private`, not `no-store`,
    /// and not a response to a request with `Authorization` that does not allow it (§3.5).
    static func sharedCacheMayKeep(request: URLRequest, response: HTTPURLResponse) -> Bool {
        let control = HTTPCacheControl(HTTPFields(response))
        if control.isPrivate || (control.noStore && !control.mustUnderstand) { return false }
        guard request.value(forHTTPHeaderField: "Authorization") != nil else { return true }
        return control.isPublic || control.sharedMaxAge != nil || control.mustRevalidate
    }

    /// `metadata` with its freshness computed by the rules of a shared cache (`s-maxage`), for
    /// the shared tier.
    static func sharedMetadata(_ metadata: DiskCache.Metadata) -> DiskCache.Metadata {
        var metadata = metadata
        if let until = HTTPFreshness.freshUntil(metadata, kind: .shared) {
            metadata.extra[HTTPFreshness.freshUntilKey] = String(format: "%.3f", until.timeIntervalSince1970)
        }
        return metadata
    }

    // MARK: - Vary variants

    /// The key that the variant of `baseKey` for `request` is stored under, when the entry under
    /// `baseKey` has a `Vary` that `request` does not match; `nil` when the base entry answers it
    /// (or has no `Vary`, or `Vary: *`).
    ///
    /// - Returns: The variant's key, and whether the base entry lists it (an unlisted variant
    ///   entry may predate an invalidation of the URL, so it is fetched anew).
    func variantKey(forBase baseKey: String, metadata: DiskCache.Metadata, request: URLRequest)
        -> (key: String, isListed: Bool)?
    {
        guard let vary = metadata.extra[HTTPFreshness.varyKey],
            !HTTPFreshness.matchesVary(metadata, request: request),
            let values = HTTPFreshness.varyValues(vary, of: request)
        else { return nil }
        let key = baseKey + Self.variantSeparator + values.replacingOccurrences(of: "\n", with: "; ")
        return (key, HTTPFreshness.variants(of: metadata).contains(key))
    }

    /// What separates a base key from a variant's values in a variant's key.
    static let variantSeparator = "#vary:"

    /// The base key of a variant's key, or `nil` for a key that is not a variant's.
    static func baseKey(ofVariant key: String) -> String? {
        key.range(of: variantSeparator, options: .backwards).map { String(key[..<$0.lowerBound]) }
    }

    /// Lists the variant just stored under `variantKey` in its base entry's metadata, so that
    /// requests reach it and invalidation removes it.
    func registerVariant(_ variantKey: String) async {
        guard let baseKey = Self.baseKey(ofVariant: variantKey) else { return }
        do {
            guard var metadata = try await cache.attributes(forKey: baseKey)?.metadata else { return }
            var variants = HTTPFreshness.variants(of: metadata)
            guard !variants.contains(variantKey) else { return }
            variants.append(variantKey)
            metadata.extra[HTTPFreshness.variantsKey] = variants.suffix(Self.maximumVariants).joined(separator: "\n")
            let cache = self.cache
            let updated = metadata
            _ = try await offload { try cache.updateMetadata(updated, forKey: baseKey) }
            invalidateMemory(forKey: baseKey, bytesChanged: false)
        } catch {
            // Tolerated: an unlisted variant is only fetched again, never served wrongly.
            logger.debug("Could not list a Vary variant", metadata: ["key": "\(variantKey)", "error": "\(error)"])
        }
    }

    /// The most variants listed per URL; older ones are fetched again when asked for.
    static let maximumVariants = 32
}
