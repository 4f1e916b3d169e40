#if Serve
    import Foundation
    import NIOHTTP1

    /// What the access log and the metrics learn about one exchange.
    struct ExchangeRecord: Sendable {
        var method: String
        var target: String
        var version: HTTPVersion
        var client: String
        var status: Int?
        var bytes = 0
        var cacheStatus: CacheStatus = .bypass
        /// The tier that served the body, for a response served from the cache.
        var tier: ResponseStore.Tier?
        var headSent = false
    }

    /// How the cache took part in an exchange, as the access log and `X-Cache-Status` say it.
    enum CacheStatus: String, Sendable {
        case hit = "HIT"
        case miss = "MISS"
        case revalidated = "REVALIDATED"
        case expired = "EXPIRED"
        case bypass = "BYPASS"
        case onlyIfCached = "ONLY-IF-CACHED"
        /// A stale stored response served because the origin failed (RFC 5861 §4, `stale-if-error`).
        case stale = "STALE"
    }
#endif
