import Foundation
import Logging
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Loads remote resources through a `DiskCache`: memory, then disk, then network,
/// fetching over HTTP only what is not cached.
///
/// ```swift
/// let cache = try DiskCache(directory: .caches("photos"), sizeLimit: .megabytes(200))
/// let loader = ResourceLoader(cache: cache)
/// let data = try await loader.data(for: url)          // no request when `url` is cached
/// let file = try await loader.fileURL(for: videoURL)  // streamed to disk, never held in memory
/// let photo = try await loader.value(for: url, codec: .json(Photo.self))  // decoded once, kept in memory
/// ```
///
/// - Bodies delivered as data are kept in a memory tier (``memory``, sized by
///   ``Configuration/memoryCostLimit``) in front of the disk, with the metadata they were stored
///   with, so that a repeated request reads nothing from disk; under ``CachePolicy/http`` a memory
///   copy is served only while it is fresh, and revalidated otherwise. Decoded values live in the
///   memory tiers of ``ValueLoader``s (see ``values(codec:memoryCostLimit:memoryCountLimit:cost:)``).
/// - Concurrent requests for one cache key share one transfer, which is cancelled only when
///   every one of them has been cancelled.
/// - At most ``Configuration/maximumConcurrentTransfers`` transfers run at once; the others
///   wait in ``Priority`` order, which a caller may change through ``ResourceTask/priority``.
///   ``suspend()`` holds new transfers, ``resume()`` releases them, ``cancelAll()`` stops all.
/// - ``Configuration/cacheKind`` makes the loader a private cache (an app's, the default) or a
///   shared one (a server's), with RFC 9111's rules for each (``HTTPCachePolicy``); the
///   ``Configuration/sharedTier`` only ever receives what a shared cache may store. Methods other
///   than `GET` are never stored: `HEAD` is answered from a stored `GET`, and a successful `POST`,
///   `PUT`, `DELETE` or `PATCH` removes the stored responses it changes (RFC 9111 §4.4).
/// - Only a complete 2xx body is stored. Bodies from the disk cache's inline threshold up
///   stream to a file in `downloads/` inside the cache directory and are published with a
///   rename. A failed transfer leaves the previously cached entry untouched.
/// - Transient failures (timeouts, lost connections, truncated bodies, 5xx) are retried with
///   backoff per ``Configuration/retryPolicy``. Every failure is a `StashError` naming
///   the URL and the status or transport error.
/// - Under ``CachePolicy/http`` a stale entry is served when the origin fails
///   (``Configuration/maximumStaleness``, `stale-if-error`) and at once within
///   `stale-while-revalidate` while one background request revalidates it; `Vary` keeps
///   responses to requests with other header values apart, each variant stored side by side. A
///   body that stops midway is kept as a partial download and resumed with `Range` + `If-Range`,
///   in this process or a later one.
public final class ResourceLoader: Sendable {
    /// The disk cache that holds the responses.
    public let cache: DiskCache
    /// The settings the loader was created with.
    public let configuration: Configuration
    /// What sends the HTTP requests.
    public let transport: any HTTPTransport
    /// The memory tier: recently delivered bodies, with their metadata, keyed like the disk cache.
    ///
    /// Purge it with `MemoryCache.removeAll()`, or let memory pressure purge it with
    /// `MemoryCache.startRespondingToMemoryPressure(_:)`; the bodies stay on disk. Its cost
    /// is bytes, limited by ``Configuration/memoryCostLimit``. Changes made to the disk cache
    /// directly, by another loader or by another process are not seen by entries already in
    /// memory (except under ``CachePolicy/http``, which serves a copy only while it is fresh).
    public let memory: MemoryCache<CacheKey, CachedBody>

    let logger: Logger
    let scheduler: TransferScheduler
    let coordinator: TransferCoordinator
    let counters: LockedValue<Statistics>
    let downloadsDirectory: String
    let versions = KeyVersions()
    let backgroundTasks = BackgroundTasks()
    let valueTiers = ValueTiers()
    let sharedTier = SharedTierState()
    /// The decoded values being kept in memory right now, by key, version and tier (see
    /// `keep(_:from:in:)`).
    let valuesBeingKept = LockedValue<Set<KeptValue>>([])

    /// Creates a loader over `cache`, with a memory tier of
    /// ``Configuration/memoryCostLimit`` in front of it.
    ///
    /// Removes download files that crashed or killed runs left in the cache directory's
    /// `downloads/` folder (only files no live transfer holds locked).
    ///
    /// - Parameters:
    ///   - cache: Where responses are stored. Several loaders, in one process or several, may
    ///     share a cache directory.
    ///   - transport: What sends requests. Defaults to a new ``URLSessionTransport``.
    ///   - configuration: Limits, policies and hooks; see ``Configuration``.
    ///   - logger: Where the loader logs: fetches, hits and retries at `debug`, tolerated
    ///     failures at `warning`. Defaults to a logger labelled `stash.http`.
    /// - Precondition: The configuration's limits are positive.
    public init(
        cache: DiskCache, transport: any HTTPTransport = URLSessionTransport(),
        configuration: Configuration = Configuration(), logger: Logger = Logger(label: "stash.http")
    ) {
        configuration.checkValid()
        self.cache = cache
        self.transport = transport
        self.configuration = configuration
        self.logger = logger
        let memoryLimit = configuration.memoryCostLimit.bytes
        self.memory = MemoryCache(
            costLimit: memoryLimit, countLimit: memoryLimit == 0 ? 0 : .max,
            policy: configuration.memoryEvictionPolicy, cost: { $0.data.count })
        let counters = LockedValue(Statistics())
        self.counters = counters
        let scheduler = TransferScheduler(limit: configuration.maximumConcurrentTransfers)
        self.scheduler = scheduler
        let onEvent = configuration.onEvent
        self.coordinator = TransferCoordinator(scheduler: scheduler) { key in
            counters.withLock { $0.coalescedWaiters += 1 }
            onEvent?(.coalesced(key: key))
        }
        self.downloadsDirectory = cache.directory.appendingPathComponent("downloads", isDirectory: true).path
        let removed = DownloadFile.removeAbandoned(in: downloadsDirectory)
        if removed > 0 {
            logger.debug(
                "Removed abandoned download files",
                metadata: ["count": "\(removed)", "directory": "\(downloadsDirectory)"])
        }
    }

    // MARK: - Loading

    /// The body of `url`: from the memory tier or the disk cache when present, otherwise from
    /// the network (and then stored); kept in memory afterwards.
    ///
    /// - Parameters:
    ///   - url: The resource.
    ///   - cachePolicy: How to use the cache; `nil` for ``Configuration/cachePolicy``.
    ///   - priority: Where the transfer queues, if one is needed.
    /// - Throws: `StashError`: see ``response(for:delivery:)``.
    /// - Complexity: O(*k*) in the key's length for a memory hit; O(log *N*) for a disk hit in a
    ///   cache of *N* entries, plus O(*n*) to read its *n* bytes.
    public func data(
        for url: URL, cachePolicy: CachePolicy? = nil, priority: Priority = .normal
    ) async throws -> Data {
        try await data(for: ResourceRequest(url, cachePolicy: cachePolicy, priority: priority))
    }

    /// The body of `request`: from the memory tier or the disk cache when present, otherwise
    /// from the network.
    ///
    /// - Throws: `StashError`: see ``response(for:delivery:)``.
    /// - Complexity: As `data(for:cachePolicy:priority:)`.
    public func data(
        for request: URLRequest, cachePolicy: CachePolicy? = nil, priority: Priority = .normal
    ) async throws -> Data {
        try await data(for: ResourceRequest(request, cachePolicy: cachePolicy, priority: priority))
    }

    /// The body of `request`, with its cache key, variant, policy and priority.
    ///
    /// - Throws: `StashError`: see ``response(for:delivery:)``.
    /// - Complexity: As `data(for:cachePolicy:priority:)`.
    public func data(for request: ResourceRequest) async throws -> Data {
        let response = try await response(for: request, delivery: .data)
        guard let data = response.data else { preconditionFailure("a .data delivery delivered a file") }
        return data
    }

    /// A file in the cache holding the body of `url`, downloading it first when needed.
    ///
    /// Large bodies stream to disk and are never held in memory. The file stays valid while
    /// the entry exists: open or copy it promptly, and treat it as read-only.
    ///
    /// - Throws: `StashError`: see ``response(for:delivery:)``.
    /// - Complexity: O(log *N*) for a hit.
    public func fileURL(
        for url: URL, cachePolicy: CachePolicy? = nil, priority: Priority = .normal
    ) async throws -> URL {
        try await fileURL(for: ResourceRequest(url, cachePolicy: cachePolicy, priority: priority))
    }

    /// A file in the cache holding the body of `request`, downloading it first when needed.
    ///
    /// - Throws: `StashError`: see ``response(for:delivery:)``.
    /// - Complexity: O(log *N*) for a hit.
    public func fileURL(for request: ResourceRequest) async throws -> URL {
        let response = try await response(for: request, delivery: .file)
        guard let url = response.fileURL else { preconditionFailure("a .file delivery delivered data") }
        return url
    }

    /// The body of `request` with its metadata and where it came from.
    ///
    /// A `.data` delivery may be answered by the memory tier (``ResourceResponse/Source/memory``),
    /// and is kept there afterwards; a `.file` delivery always goes to the disk cache.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - delivery: Bytes in memory (the default) or the cache's file.
    /// - Throws: `StashError` with
    ///   - `StashError.Code.notFound` for a miss under ``CachePolicy/cacheOnly``, or
    ///     a `404`/`410` answer;
    ///   - `StashError.Code.invalidResponse` for another unacceptable status (the
    ///     ``HTTPStatusError`` is the cause) or a truncated body;
    ///   - `StashError.Code.transport` when the transfer failed (the `URLError` is the
    ///     cause);
    ///   - `StashError.Code.tooLarge` over ``Configuration/maximumResponseSize``;
    ///   - `StashError.Code.cancelled` when the calling task was cancelled;
    ///   - the disk cache's errors when it cannot be read.
    /// - Complexity: As `data(for:cachePolicy:priority:)`.
    public func response(for request: ResourceRequest, delivery: Delivery = .data) async throws -> ResourceResponse {
        try await load(request, delivery: delivery, waiter: Waiter(priority: request.priority))
    }

    /// Starts loading `request` and returns a handle to change its priority, follow its
    /// progress, cancel it, and await its response.
    ///
    /// - Complexity: O(1); the load runs in a new task.
    public func task(for request: ResourceRequest, delivery: Delivery = .data) -> ResourceTask {
        ResourceTask(loader: self, request: request, delivery: delivery)
    }

    /// The cache key that `request` is stored under: ``ResourceRequest/cacheKey``, or
    /// ``Configuration/cacheKey`` of its URL request, plus `#variant` when it has one.
    ///
    /// - Complexity: That of the key function.
    public func cacheKey(for request: ResourceRequest) -> String {
        let base = request.cacheKey ?? configuration.cacheKey(request.urlRequest)
        guard let variant = request.variant else { return base }
        return base + "#" + variant
    }

    // MARK: - Scheduling

    /// Holds transfers that have not started; running transfers and cache hits go on.
    ///
    /// - Complexity: O(1).
    public func suspend() {
        scheduler.suspend()
        logger.debug("Suspended")
    }

    /// Lets held transfers start again, highest priority first.
    ///
    /// - Complexity: O(*q*) per transfer started, for *q* queued transfers.
    public func resume() {
        scheduler.resume()
        logger.debug("Resumed")
    }

    /// Whether ``suspend()`` holds new transfers.
    public var isSuspended: Bool { scheduler.isSuspended }

    /// Cancels every transfer, queued or running; their requests fail with
    /// `StashError.Code.cancelled` and nothing they were downloading is stored.
    ///
    /// Requests still looking in the disk cache are not affected. The loader stays usable.
    ///
    /// - Complexity: O(*t* + *w*) for *t* transfers and *w* waiting requests.
    public func cancelAll() {
        // No slot freed by a cancelled running transfer may start a queued one that is about to
        // be cancelled too (its request would reach the origin).
        let count = scheduler.holdingAdmissions { coordinator.cancelAll() }
        logger.debug("Cancelled all transfers", metadata: ["count": "\(count)"])
    }

    /// Counters since the loader was created.
    public var statistics: Statistics {
        counters.withLock { $0 }
    }

    func emit(_ event: Event) {
        configuration.onEvent?(event)
    }
}
