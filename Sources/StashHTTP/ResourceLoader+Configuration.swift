import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// Settings of a ``ResourceLoader``.
    ///
    /// Every setting has a sensible default.
    public struct Configuration: Sendable {
        /// The most transfers running at once; further ones wait in priority order.
        ///
        /// Defaults to 6.
        public var maximumConcurrentTransfers: Int
        /// The cache policy of requests that do not set their own.
        ///
        /// Defaults to ``CachePolicy/cacheFirst``.
        public var cachePolicy: CachePolicy
        /// Whether the loader is a private cache (one user, such as an app) or a shared one (a
        /// server answering many users), which decides the RFC 9111 rules it follows.
        ///
        /// A `.shared` loader never stores, in any tier, a response with `Cache-Control: private`
        /// or `no-store`, nor a response to a request with `Authorization` unless the response
        /// has `public`, `s-maxage` or `must-revalidate` (RFC 9111 §3.5, §5.2.2.7); under
        /// ``CachePolicy/http`` it also prefers `s-maxage` and honours `proxy-revalidate`.
        /// Whatever the kind, ``sharedTier`` only ever receives what a shared cache may store.
        /// Defaults to `HTTPCacheKind.private`.
        public var cacheKind: HTTPCacheKind = .private
        /// The largest response body accepted; a larger one fails with
        /// `StashError.Code.tooLarge` as soon as its length is known or exceeded.
        ///
        /// Defaults to `nil`: the disk cache's size limit, since a larger body could not be stored.
        public var maximumResponseSize: ByteCount?
        /// The most bytes of response bodies that the loader's memory tier
        /// (``ResourceLoader/memory``) keeps, so that ``ResourceLoader/data(for:cachePolicy:priority:)-(URL,_,_)``
        /// answers repeated requests without reading the disk.
        ///
        /// A body larger than a tenth of it is not kept in memory (it stays on disk). `.zero`
        /// turns the memory tier off (its count limit is then zero too). Change the limit later
        /// through the tier's `MemoryCache.costLimit`. Defaults to 50 MB.
        public var memoryCostLimit: ByteCount
        /// Which bodies the memory tier gives up first when it is full.
        ///
        /// Defaults to `MemoryEvictionPolicy.adaptive`, which keeps often-requested bodies
        /// through a one-off pass over many URLs (as do `MemoryEvictionPolicy.sieve` and
        /// `MemoryEvictionPolicy.s3fifo`); `MemoryEvictionPolicy.leastRecentlyUsed` gives up the
        /// body read longest ago. The disk's policy is the `DiskCache`'s own.
        public var memoryEvictionPolicy: MemoryEvictionPolicy
        /// When transient failures are retried.
        ///
        /// Defaults to ``RetryPolicy/init(maximumRetries:initialDelay:multiplier:maximumDelay:)``'s defaults.
        public var retryPolicy: RetryPolicy
        /// The cache key of a request that does not set ``ResourceRequest/cacheKey``.
        ///
        /// Defaults to the URL's absolute string. Use ``cacheKey(droppingQueryItems:)`` to
        /// ignore volatile query parameters such as signed-URL tokens.
        public var cacheKey: @Sendable (URLRequest) -> String
        /// The current time, for HTTP freshness.
        ///
        /// Inject a clock in tests.
        public var clock: @Sendable () -> Date
        /// Called, outside any lock, for each ``Event``.
        public var onEvent: (@Sendable (Event) -> Void)?
        /// How long past its freshness a stored response may still be served under
        /// ``CachePolicy/http`` when the origin fails transiently (a refused or lost connection,
        /// a DNS failure, a timeout, a `5xx`): the app shows what it has instead of an error.
        ///
        /// A response's own `stale-if-error=N` lengthens it for that response. Responses with
        /// `must-revalidate` or `no-store` are never served stale. `nil` never serves a stale
        /// entry: not on failure (`stale-if-error` included), nor while revalidating. Defaults to one day, like a browser's offline
        /// use of its cache, short enough that a long-lost origin shows as an error.
        public var maximumStaleness: Duration? = .seconds(86_400)
        /// How long past its freshness a stored response is served at once under
        /// ``CachePolicy/http`` while one background request revalidates it, for responses
        /// without their own `stale-while-revalidate=N` (which takes precedence).
        ///
        /// Never for `no-cache`, `no-store` or `must-revalidate` responses. Defaults to `nil`:
        /// only responses that ask for it.
        public var staleWhileRevalidate: Duration? = nil
        /// A tier shared by a fleet, such as PostgreSQL with `StashPostgres`.
        ///
        /// Asked after the disk cache misses and before the origin; bodies from the origin are
        /// written to it. Its failures are misses, never errors. Defaults to `nil`: no shared tier.
        public var sharedTier: (any SharedTier)? = nil
        /// When bodies from the origin reach ``sharedTier``.
        ///
        /// Defaults to `SharedTierWriteMode.writeBehind`: in the background, never slowing a load.
        public var sharedTierWriteMode: SharedTierWriteMode = .writeBehind
        /// A test hook, awaited with the cache key just before a body or decoded value that a
        /// request read is kept in memory: tests let another request write the entry there.
        var willKeepInMemory: (@Sendable (String) async -> Void)?

        /// Creates a configuration.
        public init(
            maximumConcurrentTransfers: Int = 6,
            cachePolicy: CachePolicy = .cacheFirst,
            maximumResponseSize: ByteCount? = nil,
            memoryCostLimit: ByteCount = .megabytes(50),
            memoryEvictionPolicy: MemoryEvictionPolicy = .adaptive,
            retryPolicy: RetryPolicy = RetryPolicy(),
            cacheKey: @escaping @Sendable (URLRequest) -> String = Configuration.urlCacheKey,
            clock: @escaping @Sendable () -> Date = { Date() },
            onEvent: (@Sendable (Event) -> Void)? = nil
        ) {
            self.maximumConcurrentTransfers = maximumConcurrentTransfers
            self.cachePolicy = cachePolicy
            self.maximumResponseSize = maximumResponseSize
            self.memoryCostLimit = memoryCostLimit
            self.memoryEvictionPolicy = memoryEvictionPolicy
            self.retryPolicy = retryPolicy
            self.cacheKey = cacheKey
            self.clock = clock
            self.onEvent = onEvent
        }

        /// The default cache key: the request URL's absolute string.
        @Sendable public static func urlCacheKey(_ request: URLRequest) -> String {
            request.url?.absoluteString ?? ""
        }

        /// A cache key function that ignores the named query parameters, so that URLs differing
        /// only in them (signed-URL tokens, expiry stamps, cache busters) share one entry.
        ///
        /// ```swift
        /// configuration.cacheKey = .cacheKey(droppingQueryItems: ["token", "X-Amz-Signature", "Expires"])
        /// ```
        ///
        /// - Parameter names: Query parameter names, compared exactly.
        /// - Returns: A function that returns the URL without those parameters, other parameters
        ///   keeping their order.
        public static func cacheKey(droppingQueryItems names: Set<String>) -> @Sendable (URLRequest) -> String {
            { request in
                guard let url = request.url else { return "" }
                guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                    let items = components.queryItems
                else { return url.absoluteString }
                let kept = items.filter { !names.contains($0.name) }
                components.queryItems = kept.isEmpty ? nil : kept
                return components.url?.absoluteString ?? url.absoluteString
            }
        }

        /// Traps on settings that can never work: they are programming errors, not conditions to handle.
        func checkValid() {
            precondition(
                maximumConcurrentTransfers > 0,
                "ResourceLoader's maximumConcurrentTransfers must be positive, got \(maximumConcurrentTransfers).")
            precondition(
                (maximumResponseSize?.bytes ?? 1) > 0,
                "ResourceLoader's maximumResponseSize must be positive, got \(maximumResponseSize?.bytes ?? 0) bytes.")
            precondition(
                memoryCostLimit.bytes >= 0,
                "ResourceLoader's memoryCostLimit must not be negative, got \(memoryCostLimit.bytes) bytes.")
            precondition(
                retryPolicy.maximumRetries >= 0 && retryPolicy.multiplier >= 1 && retryPolicy.initialDelay >= .zero,
                "ResourceLoader's retryPolicy needs maximumRetries >= 0, multiplier >= 1 and initialDelay >= 0.")
        }
    }
}
