import Foundation
import Logging
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// Counters of the loader's use of its ``Configuration/sharedTier``.
    public struct SharedTierStatistics: Sendable, Hashable {
        /// Requests answered by the shared tier (whose body was then stored in the disk cache),
        /// without a request to the origin.
        public var hits = 0
        /// Lookups in the shared tier that found nothing usable (absent, or stale under
        /// ``CachePolicy/http``); the origin answered.
        public var misses = 0
        /// Bodies from the origin written to the shared tier, and 304 revalidations that
        /// refreshed its metadata.
        public var writes = 0
        /// Lookups, writes and refreshes that failed (the database down, slow, or refusing).
        ///
        /// Each lookup was treated as a miss, each write skipped. See the tier's own log.
        public var failures = 0
    }

    /// Counters of the loader's use of its shared tier.
    ///
    /// - Complexity: O(1).
    public var sharedTierStatistics: SharedTierStatistics { sharedTier.counters.withLock { $0 } }

    /// Waits until every shared-tier write started so far in the background
    /// (`SharedTierWriteMode.writeBehind`) has finished.
    ///
    /// Call it before a process exits, or in tests; loads never need it.
    ///
    /// - Complexity: O(*w*) for *w* writes in flight.
    public func waitForSharedTierWrites() async {
        while let pending = sharedTier.pending.withLock({ $0.values.first }) {
            await pending.value
        }
    }

    /// Runs a transfer behind the shared tier: a shared hit answers it; on a miss, the tier's
    /// fill lock (if it has one) is taken, the key looked up again, and `transfer` runs while the
    /// other instances wait; the lock is released once the body has reached the shared tier.
    func withSharedTier(
        key: String, policy: CachePolicy, request: URLRequest, keepingEntry: @autoclosure () -> Bool,
        _ transfer: () async throws -> (LoadResult, TransferOutcome)
    ) async throws -> (LoadResult, TransferOutcome) {
        guard let shared = configuration.sharedTier, policy != .reload, policy != .cacheOnly else {
            return try await transfer()
        }
        switch await loadFromSharedTier(
            shared, key: key, policy: policy, request: request, keepingEntry: keepingEntry())
        {
        case .hit(let hit): return hit
        case .failed: return try await transfer()  // the tier is failing: no lock to wait for either
        case .miss: break
        }
        let lock: (any SharedTierFillLock)?
        do {
            lock = try await shared.lockForFill(forKey: key)
        } catch {
            // Deliberately tolerated: without the lock, this instance fetches like any other.
            sharedTier.counters.withLock { $0.failures += 1 }
            lock = nil
        }
        if let lock {
            if case .hit(let hit) = await loadFromSharedTier(
                shared, key: key, policy: policy, request: request, keepingEntry: keepingEntry(), isRecheck: true)
            {
                await lock.release()
                return hit
            }
            sharedTier.fillLocks.withLock { $0[key] = lock }
        }
        do {
            let result = try await transfer()
            await sharedTier.fillLocks.withLock { $0.removeValue(forKey: key) }?.release()
            return result
        } catch {
            await sharedTier.fillLocks.withLock { $0.removeValue(forKey: key) }?.release()
            throw error
        }
    }

    /// A lookup in the shared tier: a hit is stored in the disk cache and delivered; a miss or a
    /// failure returns `nil`.
    ///
    /// The body streams from the tier: one at or above the disk tier's inline threshold goes
    /// chunk by chunk into a download file that the disk cache takes by rename, as a download
    /// from the origin does; a smaller one is received in memory. With `keepingEntry` (a request
    /// waits for the cache's file) the admission policy may not turn the entry away.
    private func loadFromSharedTier(
        _ shared: any SharedTier, key: String, policy: CachePolicy, request: URLRequest, keepingEntry: Bool,
        isRecheck: Bool = false
    ) async -> SharedLookup {
        let clock = configuration.clock
        let spool = SharedBodySpool(
            fileThreshold: cache.configuration.inlineThreshold.bytes, directory: downloadsDirectory,
            accepts: { [self] head in
                guard policy == .http else { return true }
                switch httpReuse(localMetadata(head.metadata), request: request, now: clock()) {
                case .fresh, .stale: return true
                case .revalidate, .unusable, .onlyIfCachedMiss: return false
                }
            })
        let head: SharedEntryHead?
        do {
            head = try await shared.streamEntry(forKey: key, into: spool)
        } catch {
            // Deliberately tolerated: the shared tier is an optimisation; the origin answers.
            spool.discard()
            sharedTier.counters.withLock { $0.failures += 1 }
            logger.debug("Shared tier lookup failed", metadata: ["key": "\(key)", "error": "\(error)"])
            return .failed
        }
        guard let head else {
            spool.discard()  // absent, stale, or a body that failed verification: never served
            if !isRecheck { sharedTier.counters.withLock { $0.misses += 1 } }
            return .miss
        }
        let memoryKey = CacheKey(key)
        versions.beginWrite(memoryKey)
        var timeToLive: Duration?
        if let expires = head.expires {
            timeToLive = .seconds(max(0.001, expires.timeIntervalSince(configuration.clock())))
        }
        let metadata = localMetadata(head.metadata)
        var result = LoadResult(metadata: metadata, source: .shared)
        do {
            switch spool.finish() {
            case .memory(let data):
                result.data = data
                try await cache.store(
                    data, forKey: key, timeToLive: timeToLive, metadata: metadata, mayBeTurnedAway: !keepingEntry)
            case .file(let file):
                defer { file.remove() }  // normally gone already; removes it if the cache copied instead
                // Opened before the move: the bytes stay readable whatever the cache does next.
                result.retainedBody = RetainedBody(path: file.path)
                try await cache.store(
                    fileAt: URL(fileURLWithPath: file.path), forKey: key, moving: true, timeToLive: timeToLive,
                    metadata: metadata, mayBeTurnedAway: !keepingEntry)
            }
        } catch {
            // Tolerated like a download that cannot be stored: the caller still gets the body.
            result.unstoredReason = error as? StashError ?? StashError(.io, "Cannot store '\(key)'.", cause: error)
            counters.withLock { $0.storeFailures += 1 }
        }
        invalidateMemory(forKey: key, bytesChanged: true)
        result.version = versions.endWrite(memoryKey)
        if result.unstoredReason != nil, result.data == nil {
            // The waiting requests get data, as for an unstored download; without the retained
            // file (it could not be opened) the origin answers instead.
            guard let data = try? result.retainedBody?.data() else { return .failed }
            result.data = data
        }
        sharedTier.counters.withLock { $0.hits += 1 }
        logger.debug("Shared tier hit", metadata: ["key": "\(key)", "size": "\(head.size)"])
        return .hit((result, result.unstoredReason == nil ? .stored : .notStored))
    }

    /// Hands a body just downloaded and stored to the shared tier, in the background or before
    /// returning (``Configuration/sharedTierWriteMode``).
    ///
    /// The caller has checked that a shared cache may store the response
    /// (``sharedCacheMayStore(request:response:)``); its freshness is recomputed by the shared
    /// rules (`s-maxage`).
    func shareDownload(_ result: LoadResult, key: String) async {
        guard let shared = configuration.sharedTier else { return }
        let metadata = Self.sharedMetadata(result.metadata)
        let data = result.data
        let retained = result.retainedBody
        let created = configuration.clock()
        let lock = sharedTier.fillLocks.withLock { $0.removeValue(forKey: key) }
        await writeToSharedTier(key: key, releasing: lock) {
            if let data {
                try await shared.store(SharedEntry(key: key, body: data, metadata: metadata, created: created))
            } else if let retained {
                // A body stored as a file streams from it: never read into memory whole.
                let head = SharedEntryHead(
                    key: key, size: try retained.size(), metadata: metadata, created: created)
                try await shared.store(head, body: RetainedBodyChunks(body: retained, chunkSize: Self.sharedChunkSize))
            }
        }
    }

    /// After a `304 Not Modified`, gives the shared copy the refreshed metadata too, so that the
    /// rest of the fleet does not revalidate it again; removes it instead when the refreshed
    /// headers no longer let a shared cache store it (the 304 said `private`, say).
    func shareRevalidation(_ metadata: DiskCache.Metadata, key: String, request: URLRequest) async {
        guard let shared = configuration.sharedTier else { return }
        let lock = sharedTier.fillLocks.withLock { $0.removeValue(forKey: key) }
        let fields = HTTPFreshness.storedResponse(metadata)?.headers ?? HTTPFields()
        let status = Int(metadata.extra[HTTPFreshness.statusKey] ?? "") ?? 200
        let mayShare =
            HTTPCachePolicy(kind: .shared).storableHeaders(
                method: "GET", requestHeaders: HTTPFields(request), status: status, responseHeaders: fields) != nil
        let sharedMetadata = Self.sharedMetadata(metadata)
        await writeToSharedTier(key: key, releasing: lock) {
            if mayShare {
                _ = try await shared.updateMetadata(sharedMetadata, expires: nil, forKey: key)
            } else {
                try await shared.removeEntry(forKey: key)
            }
        }
    }

    /// Runs `write` now or in the background, then releases the fill lock the transfer held.
    private func writeToSharedTier(
        key: String, releasing lock: (any SharedTierFillLock)?, _ write: @escaping @Sendable () async throws -> Void
    ) async {
        let state = sharedTier
        let logger = logger
        let operation: @Sendable () async -> Void = {
            do {
                try await write()
                state.counters.withLock { $0.writes += 1 }
            } catch {
                // Deliberately tolerated: the body is stored locally and delivered; the fleet
                // fetches it from the origin once more.
                state.counters.withLock { $0.failures += 1 }
                logger.debug("Shared tier write failed", metadata: ["key": "\(key)", "error": "\(error)"])
            }
            await lock?.release()
        }
        switch configuration.sharedTierWriteMode {
        case .writeThrough:
            await operation()
        case .writeBehind:
            let id = state.nextID.withLock { id -> Int in
                id += 1
                return id
            }
            state.pending.withLock { pending in
                pending[id] = Task {
                    await operation()
                    _ = state.pending.withLock { $0.removeValue(forKey: id) }
                }
            }
        }
    }
}

extension ResourceLoader {
    /// The chunk size in which a file-backed download streams to the shared tier.
    static let sharedChunkSize = 1 << 20
}

/// What a lookup in the shared tier found.
enum SharedLookup {
    case hit((LoadResult, ResourceLoader.TransferOutcome))
    case miss
    case failed
}

/// The loader's shared-tier bookkeeping: counters and the background writes in flight.
final class SharedTierState: Sendable {
    let counters = LockedValue(ResourceLoader.SharedTierStatistics())
    let pending = LockedValue<[Int: Task<Void, Never>]>([:])
    let nextID = LockedValue(0)
    /// Fill locks held by transfers running now, by key, until their body reaches the shared tier.
    let fillLocks = LockedValue<[String: any SharedTierFillLock]>([:])
}
