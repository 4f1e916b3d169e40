import Foundation
import Stash

/// What a ``ResourceLoader`` delivered for one request.
public struct ResourceResponse: Sendable {
    /// Where the bytes came from.
    public enum Source: Sendable, Hashable {
        /// The in-memory tier.
        case memory
        /// The disk cache, without a network request.
        case disk
        /// A full response from the network.
        case network
        /// The disk cache, after the server confirmed it with `304 Not Modified`.
        case revalidated
        /// The disk cache, past its freshness, under ``ResourceLoader/CachePolicy/http``: the
        /// origin failed (see ``ResourceResponse/originFailure``), or the response's
        /// `stale-while-revalidate` window allowed it while a background request revalidates it.
        case stale
        /// The loader's shared tier (``ResourceLoader/Configuration/sharedTier``), without a
        /// request to the origin; the body is now in the disk cache too.
        case shared
    }

    /// The body, as asked for.
    public enum Body: Sendable, Hashable {
        /// The bytes in memory.
        case data(Data)
        /// A file in the cache holding the bytes; see `DiskCache.fileURL(forKey:)` for
        /// how long it stays valid.
        case file(URL)
    }

    /// The body.
    public var body: Body
    /// The cache key the response is stored under.
    public var cacheKey: String
    /// Content type, validators and caching headers, as stored.
    public var metadata: DiskCache.Metadata
    /// Where the body came from.
    public var source: Source
    /// Why a stale entry was served (``Source/stale``) instead of a fresh response: the origin's
    /// failure, such as a refused connection or a `503`; `nil` for a stale-while-revalidate serve
    /// and every other source.
    public var originFailure: StashError? = nil
    /// How old the response is (RFC 9111 §4.2.3): the `Age` a cache sends with it (§5.1).
    ///
    /// Counts the `Age` and `Date` it arrived with, the request's round trip and the time it has
    /// been stored, at the loader's clock; for a response just received from the network, the
    /// age it arrived with. `nil` for an entry stored by other means than the loader.
    public var age: Duration? = nil

    /// The bytes, when the body was delivered in memory.
    public var data: Data? {
        if case .data(let data) = body { return data }
        return nil
    }

    /// The file, when the body was delivered as a file.
    public var fileURL: URL? {
        if case .file(let url) = body { return url }
        return nil
    }
}
