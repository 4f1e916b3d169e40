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

    /// The heuristic freshness of a response with only `Last-Modified` is a tenth of its age,
    /// capped at a day (RFC 9111 §4.2.2).
    static let heuristicCap: TimeInterval = 86_400

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
    /// ones they name and the others are kept (RFC 9111 §4.3.4).
    static func metadata(
        for headers: Headers, url: URL?, receivedAt now: Date, updating previous: DiskCache.Metadata? = nil
    ) -> DiskCache.Metadata {
        var metadata = previous ?? DiskCache.Metadata()
        metadata.contentType = headers.contentType ?? metadata.contentType
        metadata.etag = headers.etag ?? metadata.etag
        metadata.lastModified = headers.lastModified ?? metadata.lastModified
        metadata.extra[cacheControlKey] = headers.cacheControl ?? metadata.extra[cacheControlKey]
        metadata.extra[expiresKey] = headers.expires ?? metadata.extra[expiresKey]
        metadata.extra[dateKey] = headers.date ?? metadata.extra[dateKey]
        if let url { metadata.extra[urlKey] = url.absoluteString }
        var merged = headers
        merged.cacheControl = metadata.extra[cacheControlKey]
        merged.expires = metadata.extra[expiresKey]
        merged.date = metadata.extra[dateKey]
        merged.lastModified = metadata.lastModified
        metadata.extra[storedAtKey] = format(now)
        metadata.extra[freshUntilKey] = format(freshUntil(merged, receivedAt: now))
        return metadata
    }

    /// Whether `headers` forbid storing the response (`Cache-Control: no-store`).
    static func forbidsStoring(_ headers: Headers) -> Bool {
        HTTPCacheControl(parsing: headers.cacheControl).noStore
    }

    /// When a response received at `now` with `headers` stops being fresh (RFC 9111 §4.2).
    ///
    /// `no-cache` makes it stale at once; then `max-age`, then `Expires` relative to `Date`,
    /// then the `Last-Modified` heuristic; without any of them it is stale at once, so that
    /// ``ResourceLoader/CachePolicy/http`` revalidates it on every use.
    static func freshUntil(_ headers: Headers, receivedAt now: Date) -> Date {
        let control = HTTPCacheControl(parsing: headers.cacheControl)
        if control.noCache { return now }
        let date = headers.date.flatMap(HTTPDate.parse)
        let apparentAge = date.map { max(0, now.timeIntervalSince($0)) } ?? 0
        let ageHeader = headers.age.flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        let currentAge = max(apparentAge, ageHeader)
        let lifetime: TimeInterval
        if let maxAge = control.maxAge {
            lifetime = maxAge.timeInterval
        } else if let expires = headers.expires {
            // An invalid Expires (such as "0") means "already expired" (RFC 9111 §5.3).
            guard let expiry = HTTPDate.parse(expires) else { return now }
            lifetime = expiry.timeIntervalSince(date ?? now)
        } else if let modified = headers.lastModified.flatMap(HTTPDate.parse) {
            lifetime = min(max(0, (date ?? now).timeIntervalSince(modified)) / 10, heuristicCap)
        } else {
            lifetime = 0
        }
        return now.addingTimeInterval(max(0, lifetime - currentAge))
    }

    /// Whether stored `metadata` is fresh at `now`; metadata without a recorded freshness (an
    /// entry stored by other means) is stale.
    static func isFresh(_ metadata: DiskCache.Metadata, at now: Date) -> Bool {
        guard let text = metadata.extra[freshUntilKey], let until = TimeInterval(text) else { return false }
        return now.timeIntervalSince1970 < until
    }

    private static func format(_ date: Date) -> String {
        String(format: "%.3f", date.timeIntervalSince1970)
    }
}
