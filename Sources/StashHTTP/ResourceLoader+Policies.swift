import Foundation

extension ResourceLoader {
    /// How a request uses the cache.
    public enum CachePolicy: Sendable, Hashable {
        /// Use a stored entry whenever one is present, without any network request; fetch and
        /// store only on a miss. The default.
        ///
        /// Every 2xx response is stored, whatever its caching headers say.
        case cacheFirst
        /// Follow HTTP caching (RFC 9111, by ``Configuration/cacheKind``): store what
        /// ``HTTPCachePolicy/storableHeaders(method:requestHeaders:status:responseHeaders:)``
        /// allows (never `no-store`; for a shared loader never `private`); serve an entry while it
        /// is fresh by `s-maxage` (shared), `max-age`, `Expires` or the `Last-Modified` heuristic,
        /// as the request's `Cache-Control` (`no-cache`, `max-age`, `min-fresh`, `max-stale`,
        /// `only-if-cached`) or `Pragma: no-cache` allow; revalidate a stale one with
        /// `If-None-Match` / `If-Modified-Since` (a 304 refreshes its headers and serves the
        /// stored bytes); revalidate `no-cache` responses on every use. A stored error status
        /// (a `404` with `max-age`, say) answers with the same error while it is fresh.
        case http
        /// Serve only what is stored, fresh or stale, and never touch the network: a miss throws
        /// `StashError.Code.notFound`. For offline use.
        case cacheOnly
        /// Always fetch from the network and store the result, replacing the entry. A failed
        /// fetch leaves the old entry in place.
        case reload
    }

    /// The order in which queued transfers start.
    ///
    /// A transfer shared by several requests runs at the highest priority among them.
    public enum Priority: Int, Sendable, Hashable, Comparable, CaseIterable {
        /// Prefetching and other work nobody waits for.
        case veryLow
        /// Below normal.
        case low
        /// The default.
        case normal
        /// Above normal, such as content on screen.
        case high
        /// Content the user is waiting for right now.
        case veryHigh

        /// Orders priorities from ``veryLow`` to ``veryHigh``.
        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// When and how often a failed transfer is tried again.
    ///
    /// Only transient failures are retried: timeouts, lost or refused connections, truncated
    /// bodies, `408`, `429` and `5xx` statuses other than `501` and `505`. The delay before retry
    /// *n* (from 1) is `initialDelay × multiplierⁿ⁻¹`, at most `maximumDelay`, with up to half
    /// of it randomised so that many clients do not retry in step; a `Retry-After` header of
    /// a number of seconds lengthens it, within `maximumDelay`.
    public struct RetryPolicy: Sendable, Hashable {
        /// Retries after the first attempt.
        ///
        /// Defaults to 2, so at most 3 requests per transfer.
        public var maximumRetries: Int
        /// The delay before the first retry.
        ///
        /// Defaults to 250 milliseconds.
        public var initialDelay: Duration
        /// The factor between successive delays.
        ///
        /// Defaults to 2.
        public var multiplier: Double
        /// The longest delay.
        ///
        /// Defaults to 10 seconds.
        public var maximumDelay: Duration

        /// Creates a retry policy.
        public init(
            maximumRetries: Int = 2, initialDelay: Duration = .milliseconds(250), multiplier: Double = 2,
            maximumDelay: Duration = .seconds(10)
        ) {
            self.maximumRetries = maximumRetries
            self.initialDelay = initialDelay
            self.multiplier = multiplier
            self.maximumDelay = maximumDelay
        }

        /// Never retry.
        public static let none = RetryPolicy(maximumRetries: 0)

        /// The delay before retry number `retry` (from 1), at least `serverDelay` when the
        /// server asked for one, never more than ``maximumDelay``.
        func delay(beforeRetry retry: Int, serverDelay: Duration? = nil) -> Duration {
            let base = initialDelay * pow(multiplier, Double(max(0, retry - 1)))
            let capped = min(base, maximumDelay)
            let jittered = capped * (0.5 + Double.random(in: 0...0.5))
            return min(max(jittered, serverDelay ?? .zero), maximumDelay)
        }
    }
}

extension ResourceLoader {
    /// How a response's body is handed over.
    public enum Delivery: Sendable, Hashable {
        /// As bytes in memory (``ResourceResponse/Body/data(_:)``).
        case data
        /// As the cache's file (``ResourceResponse/Body/file(_:)``), never loading it into memory.
        case file
    }
}
