import Foundation

extension HTTPCachePolicy {
    // MARK: - Reusing stored responses (§4)

    /// Whether `stored` may answer a request, and how (§4).
    ///
    /// In order:
    /// 1. The method must allow it: a stored `GET` answers `GET` and `HEAD`, a stored `HEAD`
    ///    only `HEAD`; otherwise ``HTTPCacheReuse/unusable``.
    /// 2. `Vary` (§4.1): every field it names must have the same value in the request as in
    ///    ``StoredResponse/varyingRequestHeaders`` (lines combined, whitespace around commas
    ///    ignored, absent matching only absent); `Vary: *` never matches. Otherwise unusable.
    /// 3. The request's directives (§5.2.1), from `Cache-Control`, or `Pragma: no-cache` when
    ///    there is no `Cache-Control` (§5.4): `no-store` and `no-cache` send it to the origin;
    ///    `max-age=N` accepts only an age up to N; `min-fresh=N` needs N more seconds of
    ///    freshness; `max-stale[=N]` accepts a stale response (up to N seconds stale) unless the
    ///    response forbids it.
    /// 4. The response's directives (those of a valid field of ``targetedFields`` in place of
    ///    `Cache-Control`, RFC 9213 §2.2): unqualified `no-cache` always revalidates
    ///    (§5.2.2.4); a stale response with `must-revalidate` (§5.2.2.2), or for a shared cache
    ///    `proxy-revalidate` or `s-maxage` (§5.2.2.8, §5.2.2.10), is never served stale.
    /// 5. `only-if-cached` (§5.2.1.7) turns every answer that needs the origin into
    ///    ``HTTPCacheReuse/onlyIfCachedMiss``.
    ///
    /// Serving a stale response because the origin is unreachable (`stale-if-error`) or while it
    /// is revalidated (`stale-while-revalidate`) is the caller's choice after a
    /// ``HTTPCacheReuse/revalidate(validators:)``; see ``staleness(of:now:)``.
    ///
    /// - Parameters:
    ///   - method: The request method, any case.
    ///   - requestHeaders: The request's header fields.
    ///   - stored: The stored response for the request's URI.
    ///   - now: The present.
    /// - Returns: The decision.
    /// - Complexity: O(*n*) in the header fields' length.
    public func reuse(method: String, requestHeaders: HTTPFields, stored: StoredResponse, now: Date) -> HTTPCacheReuse {
        let request = HTTPCacheControl(requestHeaders)
        let decision = reuseIgnoringOnlyIfCached(
            method: method, requestHeaders: requestHeaders, request: request, stored: stored, now: now)
        guard request.onlyIfCached else { return decision }
        switch decision {
        case .revalidate, .unusable: return .onlyIfCachedMiss
        default: return decision
        }
    }

    private func reuseIgnoringOnlyIfCached(
        method: String, requestHeaders: HTTPFields, request: HTTPCacheControl, stored: StoredResponse, now: Date
    ) -> HTTPCacheReuse {
        let method = method.uppercased()
        let storedMethod = stored.method.uppercased()
        guard method == storedMethod || (method == "HEAD" && storedMethod == "GET") else { return .unusable }
        guard matchesVary(requestHeaders: requestHeaders, stored: stored) else { return .unusable }

        var validators: HTTPFields { Self.validators(stored.headers) }
        let wantsValidation =
            request.noStore || request.noCache
            || (!requestHeaders.contains("Cache-Control") && Self.pragmaNoCache(requestHeaders))
        let directives = responseDirectives(stored.headers)
        let response = directives.control
        if wantsValidation || response.noCache { return .revalidate(validators: validators) }

        let date = Self.date(stored.headers)
        let age = currentAge(
            responseHeaders: stored.headers, date: date, requestTime: stored.requestTime,
            responseTime: stored.responseTime, now: now)
        let lifetime = freshnessLifetime(
            status: stored.status, responseHeaders: stored.headers, directives: directives,
            date: date ?? stored.responseTime)
        if let maxAge = request.maxAge, age > maxAge || maxAge == .zero { return .revalidate(validators: validators) }
        if age < lifetime {
            if let minFresh = request.minFresh, lifetime - age < minFresh { return .revalidate(validators: validators) }
            return .fresh(age: age)
        }
        let forbidsStale =
            response.mustRevalidate
            || (kind == .shared && (response.proxyRevalidate || response.sharedMaxAge != nil))
        if !forbidsStale, let maxStale = request.maxStale, request.minFresh == nil {
            if let limit = maxStale, age - lifetime > limit { return .revalidate(validators: validators) }
            return .stale(age: age)
        }
        return .revalidate(validators: validators)
    }

    /// Whether the request's values of the fields that `stored`'s `Vary` names are those it was
    /// stored for (§4.1); `Vary: *` never matches.
    ///
    /// - Complexity: O(*n* · *v*) for *n* header lines and *v* names in `Vary`.
    public func matchesVary(requestHeaders: HTTPFields, stored: StoredResponse) -> Bool {
        for name in Self.varyNames(stored.headers) {
            if name == "*" { return false }
            let now = Self.normalizedValue(requestHeaders.values(for: name))
            let then = Self.normalizedValue(stored.varyingRequestHeaders.values(for: name))
            if now != then { return false }
        }
        return true
    }

    /// How far past its freshness `stored` is at `now`: zero while fresh.
    ///
    /// A caller compares it with `stale-if-error` / `stale-while-revalidate` (RFC 5861) or its
    /// own limit to serve a stale response when the origin fails; never for a response with
    /// `no-cache`, `must-revalidate`, or (shared) `proxy-revalidate` / `s-maxage`: see
    /// ``mayServeStale(_:)``.
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public func staleness(of stored: StoredResponse, now: Date) -> Duration {
        max(.zero, currentAge(of: stored, now: now) - freshnessLifetime(of: stored))
    }

    /// Whether `stored` may ever be served stale without revalidation (when disconnected from the
    /// origin, §4.2.4): not with `no-cache`, `no-store`, `must-revalidate`, nor for a shared
    /// cache `proxy-revalidate` or `s-maxage` (from a valid targeted field in place of
    /// `Cache-Control`, RFC 9213 §2.2).
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public func mayServeStale(_ stored: StoredResponse) -> Bool {
        let control = responseControl(stored.headers)
        if control.noCache || control.noStore || control.mustRevalidate { return false }
        return kind == .private || !(control.proxyRevalidate || control.sharedMaxAge != nil)
    }

    /// The conditional header fields that revalidate a response with `headers` (§4.3.1):
    /// `If-None-Match` from `ETag`, `If-Modified-Since` from `Last-Modified`.
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public static func validators(_ headers: HTTPFields) -> HTTPFields {
        var validators = HTTPFields()
        if let etag = headers["ETag"] { validators.add(etag, for: "If-None-Match") }
        if let modified = headers.values(for: "Last-Modified").first {
            validators.add(modified, for: "If-Modified-Since")
        }
        return validators
    }

    /// Whether `Pragma` lists `no-cache` (§5.4).
    static func pragmaNoCache(_ headers: HTTPFields) -> Bool {
        headers.values(for: "Pragma").contains { line in
            line.split(separator: ",").contains { $0.trimmingHTTPWhitespace.lowercased() == "no-cache" }
        }
    }

    /// Lines of one field as one value, with the whitespace around commas removed (§4.1);
    /// `nil` when absent.
    static func normalizedValue(_ lines: [String]) -> String? {
        guard !lines.isEmpty else { return nil }
        if lines.count == 1, !lines[0].utf8.contains(0x2C) { return lines[0] }
        return lines.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingHTTPWhitespace }.joined(separator: ",")
    }
}
