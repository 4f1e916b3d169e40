import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request to a ``ResourceLoader``: the HTTP request plus how to cache and schedule it.
public struct ResourceRequest: Sendable {
    /// The HTTP request.
    ///
    /// Its URL must be set.
    public var urlRequest: URLRequest
    /// The cache policy, or `nil` for the loader's ``ResourceLoader/Configuration/cachePolicy``.
    public var cachePolicy: ResourceLoader.CachePolicy?
    /// The initial priority.
    ///
    /// Change it later through ``ResourceTask/priority``.
    public var priority: ResourceLoader.Priority
    /// The cache key, or `nil` for the loader's ``ResourceLoader/Configuration/cacheKey`` of
    /// ``urlRequest``.
    public var cacheKey: String?
    /// A variant appended to the cache key (as `key#variant`), so that one URL can have
    /// several entries: the same photo in several sizes, or one response per `Accept` value.
    public var variant: String?

    /// Creates a request for `urlRequest`.
    public init(
        _ urlRequest: URLRequest, cachePolicy: ResourceLoader.CachePolicy? = nil,
        priority: ResourceLoader.Priority = .normal, cacheKey: String? = nil, variant: String? = nil
    ) {
        self.urlRequest = urlRequest
        self.cachePolicy = cachePolicy
        self.priority = priority
        self.cacheKey = cacheKey
        self.variant = variant
    }

    /// Creates a `GET` request for `url`.
    public init(
        _ url: URL, cachePolicy: ResourceLoader.CachePolicy? = nil, priority: ResourceLoader.Priority = .normal,
        cacheKey: String? = nil, variant: String? = nil
    ) {
        self.init(
            URLRequest(url: url), cachePolicy: cachePolicy, priority: priority, cacheKey: cacheKey, variant: variant)
    }

    /// The request's URL.
    public var url: URL? { urlRequest.url }
}
