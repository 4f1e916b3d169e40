import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Loads remote resources as decoded values: a typed front end of a ``ResourceLoader`` with its
/// own memory tier of decoded values, in front of the loader's disk cache of response bytes.
///
/// Make one per value type with ``ResourceLoader/values(codec:memoryCostLimit:memoryCountLimit:cost:)``
/// and keep it:
///
/// ```swift
/// let photos = loader.values(codec: .json(Photo.self), memoryCountLimit: 500)
/// let photo = try await photos.value(for: url)  // network: stored on disk as received, decoded once
/// let again = try await photos.value(for: url)  // memory: the same decoded value, no request, no decoding
/// photos.cache.memory.removeAll()               // the bytes stay on disk: the next read decodes them again
/// ```
///
/// A request is answered by the first of:
/// 1. the decoded value in ``cache``'s memory tier;
/// 2. the bytes on the loader's disk cache, decoded, then kept in memory;
/// 3. the network, through the loader (shared transfers, priorities, HTTP validators, retries):
///    the body is stored on disk as received, then decoded once and kept in memory.
///
/// Steps 1 and 2 follow the cache policy: ``ResourceLoader/CachePolicy/reload`` skips them;
/// under ``ResourceLoader/CachePolicy/http`` they serve a value only while the disk entry is
/// fresh (one index lookup per request, no body read), and a stale one is revalidated (a `304`
/// serves the stored bytes, decoded again). When a transfer of the loader replaces an entry's
/// bytes (a `.reload`, or a changed response after revalidation), every front end of the loader
/// drops its decoded value for that key.
///
/// **Bodies that do not decode** fail the request with `StashError.Code.decodingFailed`,
/// naming the URL, and are removed from the disk cache (and from every memory tier), so they are
/// never a hit: the next request for the URL fetches it again, and fails again until the server
/// sends a body the codec accepts. Bytes already on disk that no longer decode (written for an
/// older version of the type) are removed by ``cache`` when read, and fetched again.
///
/// Concurrent first requests for one URL share one download; each decodes the body.
public final class ValueLoader<Value: Sendable>: Sendable {
    /// The loader that fetches and stores the bytes.
    public let loader: ResourceLoader
    /// The two-tier cache of decoded values: its `Cache.memory` holds values, its
    /// `Cache.disk` is the loader's disk cache.
    ///
    /// Use it to purge or trim memory, to respond to memory pressure, and for its statistics.
    public let cache: Cache<Value>

    let tier: ValueTier<Value>

    init(loader: ResourceLoader, tier: ValueTier<Value>) {
        self.loader = loader
        self.tier = tier
        self.cache = tier.cache
    }

    /// The value that the body of `url` decodes to.
    ///
    /// - Parameters:
    ///   - url: The resource.
    ///   - cachePolicy: How to use the cache; `nil` for the loader's
    ///     ``ResourceLoader/Configuration/cachePolicy``.
    ///   - priority: Where the transfer queues, if one is needed.
    /// - Throws: `StashError`: see ``valueAndSource(for:)``.
    /// - Complexity: O(*k*) in the key's length for a memory hit (plus an O(log *N*) index lookup
    ///   under ``ResourceLoader/CachePolicy/http``); otherwise as
    ///   ``ResourceLoader/data(for:cachePolicy:priority:)-(URL,_,_)`` plus decoding.
    public func value(
        for url: URL, cachePolicy: ResourceLoader.CachePolicy? = nil, priority: ResourceLoader.Priority = .normal
    ) async throws -> Value {
        try await valueAndSource(for: ResourceRequest(url, cachePolicy: cachePolicy, priority: priority)).value
    }

    /// The value that the body of `request` decodes to.
    ///
    /// - Throws: `StashError`: see ``valueAndSource(for:)``.
    /// - Complexity: As `value(for:cachePolicy:priority:)`.
    public func value(
        for request: URLRequest, cachePolicy: ResourceLoader.CachePolicy? = nil,
        priority: ResourceLoader.Priority = .normal
    ) async throws -> Value {
        try await valueAndSource(for: ResourceRequest(request, cachePolicy: cachePolicy, priority: priority)).value
    }

    /// The value that the body of `request`, with its cache key, variant, policy and priority,
    /// decodes to.
    ///
    /// - Throws: `StashError`: see ``valueAndSource(for:)``.
    /// - Complexity: As `value(for:cachePolicy:priority:)`.
    public func value(for request: ResourceRequest) async throws -> Value {
        try await valueAndSource(for: request).value
    }

    /// The value that the body of `request` decodes to, and where it came from.
    ///
    /// The source is ``ResourceResponse/Source/memory`` for a value decoded earlier,
    /// ``ResourceResponse/Source/disk`` for stored bytes decoded now, and
    /// ``ResourceResponse/Source/network`` or ``ResourceResponse/Source/revalidated`` after a
    /// transfer.
    ///
    /// - Parameter request: The request.
    /// - Returns: The value and its source.
    /// - Throws: `StashError` with `StashError.Code.decodingFailed` when the body
    ///   cannot be decoded (the message names the URL; the body is removed from the cache), or
    ///   as ``ResourceLoader/response(for:delivery:)``.
    /// - Complexity: As `value(for:cachePolicy:priority:)`.
    public func valueAndSource(for request: ResourceRequest) async throws
        -> (value: Value, source: ResourceResponse.Source)
    {
        try await loader.loadValue(request, tier: tier)
    }
}
