import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the loader records a response's caching headers in `DiskCache.Metadata` and decides,
/// under ``ResourceLoader/CachePolicy/http``, whether a stored response is still fresh.
///
/// Freshness lives in `metadata.extra` rather than in the disk cache's time-to-live, because
/// an expired disk entry is deleted when read, while a stale HTTP response must stay available
/// for revalidation and for ``ResourceLoader/CachePolicy/cacheOnly``.
enum HTTPFreshness {
    static let storedAtKey = "http.stored-at"
    static let freshUntilKey = "http.fresh-until"
    static let cacheControlKey = "http.cache-control"
    static let expiresKey = "http.expires"
    static let dateKey = "http.date"
    static let urlKey = "http.url"
    static let ageKey = "http.age"
    static let statusKey = "http.status"
    static let requestedAtKey = "http.requested-at"
    /// The age the response had when it arrived (RFC 9111 §4.2.3's `corrected_initial_age`), in seconds.
    static let initialAgeKey = "http.initial-age"

    /// The caching-relevant header values of one response.
    struct Headers: Sendable {
        var contentType: String?
        var etag: String?
        var lastModified: String?
        var cacheControl: String?
        var expires: String?
        var date: String?
        var age: String?
        var vary: String?

        /// Reads the headers with `value(forHTTPHeaderField:)`: on Linux `allHeaderFields` keeps
        /// the server's spelling, so `allHeaderFields["ETag"]` misses an `etag` header.
        init(_ response: HTTPURLResponse) {
            contentType = response.value(forHTTPHeaderField: "Content-Type")
            etag = response.value(forHTTPHeaderField: "ETag")
            lastModified = response.value(forHTTPHeaderField: "Last-Modified")
            cacheControl = response.value(forHTTPHeaderField: "Cache-Control")
            expires = response.value(forHTTPHeaderField: "Expires")
            date = response.value(forHTTPHeaderField: "Date")
            age = response.value(forHTTPHeaderField: "Age")
            vary = response.value(forHTTPHeaderField: "Vary")
        }

        init() {}
    }

    /// The metadata to store for a response received at `now`.
    ///
    /// For a 304, pass the stored metadata as `previous`: the 304's headers replace the stored
    /// ones they name and the others are kept (RFC 9111 §4.3.4); its `Age` (or the lack of one)
    /// replaces the stored one, since the age is that of the validation.
    ///
    /// - Parameters:
    ///   - status: Recorded when it is not 200.
    ///   - requestedAt: When the request was sent (RFC 9111 §4.2.3's `request_time`); `now` if `nil`.
    ///   - kind: Whose freshness rules set ``freshUntilKey`` (`s-maxage` counts only for `.shared`).
    static func metadata(
        for headers: Headers, url: URL?, status: Int = 200, requestedAt: Date? = nil, receivedAt now: Date,
        kind: HTTPCacheKind = .private, updating previous: DiskCache.Metadata? = nil
    ) -> DiskCache.Metadata {
        var metadata = previous ?? DiskCache.Metadata()
        metadata.contentType = headers.contentType ?? metadata.contentType
        metadata.etag = headers.etag ?? metadata.etag
        metadata.lastModified = headers.lastModified ?? metadata.lastModified
        metadata.extra[cacheControlKey] = headers.cacheControl ?? metadata.extra[cacheControlKey]
        metadata.extra[expiresKey] = headers.expires ?? metadata.extra[expiresKey]
        metadata.extra[dateKey] = headers.date ?? metadata.extra[dateKey]
        metadata.extra[ageKey] = headers.age
        if previous == nil, status != 200 { metadata.extra[statusKey] = String(status) }
        if let url { metadata.extra[urlKey] = url.absoluteString }
        metadata.extra[storedAtKey] = format(now)
        metadata.extra[requestedAtKey] = format(min(requestedAt ?? now, now))
        metadata.extra[freshUntilKey] = format(freshUntil(metadata, kind: kind) ?? now)
        if let stored = storedResponse(metadata) {
            let initialAge = HTTPCachePolicy(kind: kind).currentAge(of: stored, now: stored.responseTime)
            metadata.extra[initialAgeKey] = format(initialAge.timeInterval)
        }
        return metadata
    }

    /// When a response received at `now` with `headers` stops being fresh (RFC 9111 §4.2), for
    /// a private cache.
    static func freshUntil(_ headers: Headers, receivedAt now: Date) -> Date {
        let metadata = HTTPFreshness.metadata(for: headers, url: nil, receivedAt: now)
        return freshUntil(metadata, kind: .private) ?? now
    }

    /// When stored `metadata` stops being fresh for a cache of `kind` (RFC 9111 §4.2): the
    /// response time plus the freshness lifetime minus the age it arrived with; at once for
    /// `no-cache`; `nil` for metadata the loader did not record.
    static func freshUntil(_ metadata: DiskCache.Metadata, kind: HTTPCacheKind) -> Date? {
        guard let stored = storedResponse(metadata) else { return nil }
        if HTTPCacheControl(stored.headers).noCache { return stored.responseTime }
        let policy = HTTPCachePolicy(kind: kind)
        let lifetime = policy.freshnessLifetime(of: stored)
        let initialAge = policy.currentAge(of: stored, now: stored.responseTime)
        return stored.responseTime.addingTimeInterval(max(0, (lifetime - initialAge).timeInterval))
    }

    /// The stored response that `metadata` describes, for ``HTTPCachePolicy``: its caching
    /// headers (without `Vary`, which ``matchesVary(_:request:)`` checks) and times; `nil` for an
    /// entry stored by other means.
    static func storedResponse(_ metadata: DiskCache.Metadata) -> StoredResponse? {
        guard let storedAt = metadata.extra[storedAtKey].flatMap(TimeInterval.init) else { return nil }
        var fields = HTTPFields()
        if let value = metadata.extra[cacheControlKey] { fields.add(value, for: "Cache-Control") }
        if let value = metadata.extra[expiresKey] { fields.add(value, for: "Expires") }
        if let value = metadata.extra[dateKey] { fields.add(value, for: "Date") }
        if let value = metadata.extra[ageKey] { fields.add(value, for: "Age") }
        if let value = metadata.etag { fields.add(value, for: "ETag") }
        if let value = metadata.lastModified { fields.add(value, for: "Last-Modified") }
        let responseTime = Date(timeIntervalSince1970: storedAt)
        let requestTime = metadata.extra[requestedAtKey].flatMap(TimeInterval.init).map(
            Date.init(timeIntervalSince1970:))
        return StoredResponse(
            status: metadata.extra[statusKey].flatMap { Int($0) } ?? 200, headers: fields,
            requestTime: requestTime ?? responseTime, responseTime: responseTime)
    }

    /// Whether stored `metadata` is fresh at `now`; metadata without a recorded freshness (an
    /// entry stored by other means) is stale.
    ///
    /// The decision of ``HTTPCachePolicy/reuse(method:requestHeaders:stored:now:)`` for a request
    /// without directives: `current_age < freshness_lifetime` (RFC 9111 §4.2), the resident time
    /// never negative (§4.2.3, as in ``currentAge(of:at:)``), so a `now` before the recorded
    /// response time counts as that time. It is before it for up to half a millisecond after
    /// the response arrived, the time being recorded rounded to the millisecond (longer if the
    /// wall clock is set back): compared as it is, a response with no freshness at all, fresh
    /// until its response time, would be fresh then.
    static func isFresh(_ metadata: DiskCache.Metadata, at now: Date) -> Bool {
        guard let text = metadata.extra[freshUntilKey], let until = TimeInterval(text) else { return false }
        let respondedAt = metadata.extra[storedAtKey].flatMap(TimeInterval.init) ?? -.infinity
        return max(now.timeIntervalSince1970, respondedAt) < until
    }

    private static func format(_ date: Date) -> String {
        format(date.timeIntervalSince1970)
    }

    private static func format(_ seconds: TimeInterval) -> String {
        String(format: "%.3f", seconds)
    }

    /// The current age (RFC 9111 §4.2.3) of the response `metadata` records, at `now`: its
    /// initial age plus the time since it arrived; `nil` for an entry stored by other means.
    static func currentAge(of metadata: DiskCache.Metadata, at now: Date) -> Duration? {
        guard let storedAt = metadata.extra[storedAtKey].flatMap(TimeInterval.init),
            let initialAge = metadata.extra[initialAgeKey].flatMap(TimeInterval.init)
        else { return nil }
        let seconds = initialAge + max(0, now.timeIntervalSince1970 - storedAt)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
