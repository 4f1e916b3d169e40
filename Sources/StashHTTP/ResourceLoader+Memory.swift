import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// A response body in the loader's memory tier (``ResourceLoader/memory``), with the metadata
    /// it was stored with on disk.
    ///
    /// The metadata lets a memory hit report the content type and validators, and lets
    /// ``CachePolicy/http`` decide freshness without reading the disk.
    public struct CachedBody: Sendable, Hashable {
        /// The body.
        public var data: Data
        /// Content type, validators and caching headers, as stored on disk.
        public var metadata: DiskCache.Metadata
    }

    /// What the disk or a transfer gave one request, with what a memory tier needs to keep it.
    struct Loaded: Sendable {
        var response: ResourceResponse
        /// The version of the key (see ``KeyVersions``) that the bytes belong to.
        var version: UInt64
        /// Whether the bytes are in the disk cache (not a `no-store` or unstorable body).
        var isStored: Bool
        /// The entry's attributes, when the request read them.
        var attributes: DiskCache.Attributes?
    }

    /// The memory tier's response for `key`, if it has one that the policy lets it serve.
    ///
    /// Under ``CachePolicy/http`` a copy is served only as RFC 9111 §4 allows for the request
    /// (fresh, or stale within its `max-stale`); otherwise the request goes on to the disk and,
    /// from there, to revalidation.
    ///
    /// - Parameter seen: Set to the metadata of the copy in memory, served or not.
    func memoryHit(key: String, policy: CachePolicy, request: URLRequest, seen: inout DiskCache.Metadata?)
        -> ResourceResponse?
    {
        guard let entry = memory.value(forKey: CacheKey(key)) else { return nil }
        seen = entry.metadata
        var source = ResourceResponse.Source.memory
        if policy == .http {
            switch httpReuse(entry.metadata, request: request, now: configuration.clock()) {
            case .fresh: break
            case .stale: source = .stale
            case .revalidate, .unusable, .onlyIfCachedMiss: return nil
            }
        } else if !HTTPFreshness.matchesVary(entry.metadata, request: request) {
            return nil
        }
        // The disk's eviction policy should know the body is still wanted (no I/O here).
        cache.recordHit(forKey: key)
        return ResourceResponse(body: .data(entry.data), cacheKey: key, metadata: entry.metadata, source: source)
    }

    /// Keeps a body that a request read from disk or received from a transfer in the memory
    /// tier, unless the loader wrote the entry since, or the body would not be kept anyway.
    func promote(_ loaded: Loaded) async {
        let key = loaded.response.cacheKey
        let memoryKey = CacheKey(key)
        guard loaded.isStored, let data = loaded.response.data, fitsInMemory(data.count) else { return }
        await configuration.willKeepInMemory?(key)
        guard versions.isCurrent(memoryKey, loaded.version) else { return }
        guard let attributes = await attributes(of: loaded), let timeToLive = memoryTimeToLive(attributes) else {
            return
        }
        guard versions.isCurrent(memoryKey, loaded.version) else { return }
        let entry = CachedBody(data: data, metadata: loaded.response.metadata)
        memory.setValue(entry, forKey: memoryKey, timeToLive: timeToLive.duration)
        if !versions.isCurrent(memoryKey, loaded.version) {
            // A write of the key began while the body was being kept: it may be older than disk's.
            memory.removeValue(forKey: memoryKey)
        }
    }

    /// Tells the memory tiers that a transfer changed the entry under `key`: the bodies tier
    /// always (its copy carries the metadata), the tiers of decoded values when the bytes
    /// changed.
    func invalidateMemory(forKey key: String, bytesChanged: Bool) {
        memory.removeValue(forKey: CacheKey(key))
        if bytesChanged { valueTiers.removeFromMemory(forKey: key) }
    }

    /// How long memory may keep a copy of the entry, never longer than the disk entry lives.
    ///
    /// - Returns: A time-to-live (whose `duration` is `nil` for no limit), or `nil` when the entry
    ///   has already expired.
    func memoryTimeToLive(_ attributes: DiskCache.Attributes) -> MemoryTimeToLive? {
        guard !attributes.isPinned, let expires = attributes.expires else { return MemoryTimeToLive(duration: nil) }
        let remaining = expires.timeIntervalSince(cache.configuration.clock())
        guard remaining > 0 else { return nil }
        return MemoryTimeToLive(duration: .seconds(remaining))
    }

    /// A memory tier's time-to-live for one value: `duration == nil` is no limit.
    struct MemoryTimeToLive {
        var duration: Duration?
    }

    /// The attributes of the entry `loaded` came from: as read, or looked up now; `nil` when it
    /// is gone or cannot be looked up.
    func attributes(of loaded: Loaded) async -> DiskCache.Attributes? {
        if let attributes = loaded.attributes { return attributes }
        do {
            return try await liveAttributes(forKey: loaded.response.cacheKey)
        } catch {
            // Tolerated: the body is delivered either way; not keeping it in memory only sends
            // the next request to the disk, which reports the failure if it persists.
            logger.debug(
                "Not kept in memory: the disk index could not be read",
                metadata: ["key": "\(loaded.response.cacheKey)", "error": "\(error)"])
            return nil
        }
    }

    /// Whether the memory tier would keep a body of `size` bytes.
    private func fitsInMemory(_ size: Int) -> Bool {
        memory.countLimit > 0 && Double(size) <= memory.entryCostLimitRatio * Double(memory.costLimit)
    }
}
