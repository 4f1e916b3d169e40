import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// A failure worth another attempt, with the server's requested delay if it gave one.
    struct TransientFailure: Error {
        var error: StashError
        var retryAfter: Duration?
    }

    /// The stored entry vanished while it was being revalidated; fetch it whole.
    struct EntryVanished: Error {}

    /// The partial download could not be continued (a `416`, or a `206` that does not fit it):
    /// it was removed; fetch the body whole.
    struct RestartDownload: Error {}

    /// The shared work of one transfer for the cache key `key`: report how it ended, and turn
    /// every failure into a `StashError`.
    func runTransfer(_ transfer: Transfer, key: String, request: ResourceRequest, url: URL, policy: CachePolicy)
        async throws -> LoadResult
    {
        let memoryKey = CacheKey(key)
        versions.hold(memoryKey)
        defer { versions.release(memoryKey) }
        do {
            let (result, outcome) = try await withSharedTier(
                key: key, policy: policy, request: request.urlRequest, keepingEntry: transfer.wantsFile
            ) {
                try await self.performTransfer(transfer, key: key, request: request, url: url, policy: policy)
            }
            emit(.finished(key: key, outcome: outcome))
            return result
        } catch  where error is CancellationError || (error as? StashError)?.code == .cancelled {
            counters.withLock { $0.cancelledTransfers += 1 }
            logger.debug("Transfer cancelled", metadata: ["key": "\(key)"])
            emit(.finished(key: key, outcome: .cancelled))
            throw cancellation(of: url)
        } catch {
            let error = error as? StashError ?? StashError(.io, "Loading \(url.absoluteString) failed.", cause: error)
            counters.withLock { $0.failedTransfers += 1 }
            logger.debug("Transfer failed", metadata: ["key": "\(key)", "error": "\(error)"])
            emit(.finished(key: key, outcome: .failed(error.code)))
            throw error
        }
    }

    private func performTransfer(
        _ transfer: Transfer, key: String, request: ResourceRequest, url: URL, policy: CachePolicy
    ) async throws -> (LoadResult, TransferOutcome) {
        // Another transfer may have stored the entry after this request looked.
        var stored: DiskCache.Attributes?
        if policy != .reload {
            let version = versions.version(of: CacheKey(key))
            stored = try await liveAttributes(forKey: key)
            if let entry = stored, !HTTPFreshness.matchesVary(entry.metadata, request: request.urlRequest) {
                stored = nil
            }
            if let entry = stored {
                var servable = policy == .cacheFirst
                if policy == .http {
                    switch httpReuse(entry.metadata, request: request.urlRequest, now: configuration.clock()) {
                    case .fresh, .stale: servable = true
                    case .onlyIfCachedMiss: throw onlyIfCachedMiss(url, key: key)
                    case .revalidate, .unusable: break
                    }
                }
                if servable {
                    if let failure = storedFailure(entry.metadata, url: url) { throw failure }
                    return (LoadResult(metadata: entry.metadata, source: .disk, version: version), .alreadyCached)
                }
            }
        }
        var validated = stored.flatMap { $0.metadata.etag != nil || $0.metadata.lastModified != nil ? $0 : nil }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await attemptTransfer(
                    transfer, key: key, request: request, url: url, policy: policy, validated: validated,
                    attempt: attempt)
            } catch let failure as TransientFailure {
                guard attempt <= configuration.retryPolicy.maximumRetries else {
                    var error = failure.error
                    if attempt > 1 { error.message += " (\(attempt) attempts)" }
                    if let stale = staleOnError(error, stored: stored, key: key, policy: policy) { return stale }
                    throw error
                }
                counters.withLock { $0.retries += 1 }
                let delay = configuration.retryPolicy.delay(beforeRetry: attempt, serverDelay: failure.retryAfter)
                logger.debug(
                    "Retrying after a transient failure",
                    metadata: [
                        "key": "\(key)", "attempt": "\(attempt)", "delay": "\(delay)", "error": "\(failure.error)",
                    ])
                try await Task.sleep(for: delay)
            } catch let error as StashError where error.code == .transport {
                // Not worth a retry (an unknown host, say), but the origin is still unreachable.
                if let stale = staleOnError(error, stored: stored, key: key, policy: policy) { return stale }
                throw error
            } catch is EntryVanished {
                validated = nil
            } catch is RestartDownload {
                continue
            }
        }
    }

    /// One HTTP request, holding a slot of the concurrency limit.
    private func attemptTransfer(
        _ transfer: Transfer, key: String, request: ResourceRequest, url: URL, policy: CachePolicy,
        validated: DiskCache.Attributes?, attempt: Int
    ) async throws -> (LoadResult, TransferOutcome) {
        try await scheduler.acquire(transfer) { emit(.queued(key: key)) }
        defer { scheduler.release() }
        try Task.checkCancellation()

        var urlRequest = request.urlRequest
        if let validated {
            if let etag = validated.metadata.etag { urlRequest.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let modified = validated.metadata.lastModified {
                urlRequest.setValue(modified, forHTTPHeaderField: "If-Modified-Since")
            }
        }
        let partial = PartialDownload.find(in: downloadsDirectory, key: key)
        if let partial, let ifRange = partial.ifRange {
            urlRequest.setValue("bytes=\(partial.size)-", forHTTPHeaderField: "Range")
            urlRequest.setValue(ifRange, forHTTPHeaderField: "If-Range")
        }
        counters.withLock { stats in
            stats.requests += 1
            if validated != nil { stats.revalidations += 1 }
        }
        let requestedAt = configuration.clock()
        emit(.requestSent(key: key, url: url, attempt: attempt, isConditional: validated != nil))
        logger.debug(
            "Fetching",
            metadata: [
                "url": "\(url.absoluteString)", "attempt": "\(attempt)", "conditional": "\(validated != nil)",
                "resumingAt": "\(partial?.size ?? 0)",
            ])

        let receiver = BodyReceiver(
            url: url, key: key, maximumSize: maximumResponseSize,
            inlineThreshold: cache.configuration.inlineThreshold.bytes, downloadsDirectory: downloadsDirectory,
            resuming: partial, onProgress: { [coordinator] progress in coordinator.report(progress, for: transfer) })
        let response: HTTPURLResponse
        do {
            response = try await transport.send(urlRequest, onResponse: receiver.begin, onData: receiver.append)
        } catch is PartialMismatch {
            receiver.discard()
            recordBuffering(receiver)
            throw discardPartial(key: key, url: url, reason: "its 206 did not continue the partial download")
        } catch {
            // A body that stopped midway stays as a partial download; the receiver's own errors
            // (too large, disk refused) mean it must go.
            let kept = receiver.discard(keepingPartial: !(error is StashError))
            recordBuffering(receiver)
            if kept { await accountForPartialDownloads() }
            throw transportFailure(error, url: url)
        }
        recordBuffering(receiver)

        switch response.statusCode {
        case 304:
            receiver.discard()
            return try await revalidated(
                response, validated: validated, key: key, url: url, request: request.urlRequest,
                requestedAt: requestedAt)
        case 416 where partial != nil:
            receiver.discard()
            throw discardPartial(key: key, url: url, reason: "it answered 416 Range Not Satisfiable")
        case 200..<300 where response.statusCode != 206 || receiver.isResumed:
            let body: BodyReceiver.Body
            do {
                body = try receiver.finish()
            } catch let error as StashError {
                if receiver.discard(keepingPartial: true) { await accountForPartialDownloads() }
                throw TransientFailure(error: error)
            }
            if receiver.isResumed { counters.withLock { $0.resumedDownloads += 1 } }
            guard !Task.isCancelled else {
                discard(body)
                throw CancellationError()
            }
            return try await store(
                body, response: response, key: key, url: url, request: request, policy: policy,
                requestedAt: requestedAt, keepingEntry: transfer.wantsFile)
        default:
            receiver.discard()
            if policy == .http, !Self.isTransient(status: response.statusCode) {
                await storeFailureResponse(response, key: key, url: url, request: request, requestedAt: requestedAt)
            }
            throw statusFailure(response, url: url)
        }
    }

    private var maximumResponseSize: Int {
        min(configuration.maximumResponseSize?.bytes ?? .max, cache.configuration.sizeLimit.bytes)
    }

    private func recordBuffering(_ receiver: BodyReceiver) {
        counters.withLock { stats in
            stats.bytesReceived += receiver.delivered
            stats.largestBufferedBody = max(stats.largestBufferedBody, receiver.largestBuffered)
        }
    }

    /// A 304: refresh the stored entry's metadata and serve its bytes.
    private func revalidated(
        _ response: HTTPURLResponse, validated: DiskCache.Attributes?, key: String, url: URL, request: URLRequest,
        requestedAt: Date
    ) async throws -> (LoadResult, TransferOutcome) {
        guard let validated else {
            throw StashError(
                .invalidResponse,
                "GET \(url.absoluteString) answered 304 Not Modified to a request without validators: the server is misbehaving; nothing was cached.",
                cause: HTTPStatusError(statusCode: 304, url: response.url ?? url))
        }
        let metadata = HTTPFreshness.metadata(
            for: HTTPFreshness.Headers(response), url: response.url ?? url, requestedAt: requestedAt,
            receivedAt: configuration.clock(), kind: configuration.cacheKind, updating: validated.metadata)
        let cache = self.cache
        let memoryKey = CacheKey(key)
        versions.beginWrite(memoryKey)
        let updated: Result<Bool, any Error>
        do {
            updated = .success(try await offload({ try cache.updateMetadata(metadata, forKey: key) }))
        } catch {
            updated = .failure(error)
        }
        // The bytes are unchanged, so decoded values stay valid; the bodies tier's copy carries the
        // old metadata.
        invalidateMemory(forKey: key, bytesChanged: false)
        let version = versions.endWrite(memoryKey)
        guard try updated.get() else { throw EntryVanished() }
        await shareRevalidation(metadata, key: key, request: request)
        counters.withLock { $0.notModified += 1 }
        logger.debug("Not modified", metadata: ["key": "\(key)"])
        return (LoadResult(metadata: metadata, source: .revalidated, version: version), .notModified)
    }

    /// A complete 2xx body: store it unless the policy forbids, and hand it over.
    ///
    /// With `keepingEntry` (a request waits for the cache's file) the admission policy may not
    /// turn the entry away at this store.
    private func store(
        _ body: BodyReceiver.Body, response: HTTPURLResponse, key: String, url: URL, request: ResourceRequest,
        policy: CachePolicy, requestedAt: Date, keepingEntry: Bool
    ) async throws -> (LoadResult, TransferOutcome) {
        let headers = HTTPFreshness.Headers(response)
        let metadata = HTTPFreshness.recordingVary(
            headers.vary, of: request.urlRequest,
            in: HTTPFreshness.metadata(
                for: headers, url: response.url ?? url, status: response.statusCode, requestedAt: requestedAt,
                receivedAt: configuration.clock(), kind: configuration.cacheKind))
        if let reason = unstorableReason(response, request: request.urlRequest, url: url, policy: policy) {
            var result = try unstored(body, metadata: metadata, reason: reason)
            result.version = versions.version(of: CacheKey(key))
            return (result, .notStored)
        }
        let mayShare = Self.sharedCacheMayStore(request: request.urlRequest, response: response)
        let memoryKey = CacheKey(key)
        versions.beginWrite(memoryKey)
        let outcome: Result<LoadResult, any Error>
        do {
            switch body {
            case .memory(let data):
                try await cache.store(data, forKey: key, metadata: metadata, mayBeTurnedAway: !keepingEntry)
                outcome = .success(LoadResult(metadata: metadata, source: .network, data: data))
            case .file(let file, _):
                // Opened before the move: the bytes stay readable whatever the cache does next.
                let retained = RetainedBody(path: file.path)
                try await cache.store(
                    fileAt: URL(fileURLWithPath: file.path), forKey: key, moving: true, metadata: metadata,
                    mayBeTurnedAway: !keepingEntry)
                file.remove()  // normally gone already; removes it if the cache copied instead
                outcome = .success(LoadResult(metadata: metadata, source: .network, retainedBody: retained))
            }
        } catch {
            outcome = .failure(error)
        }
        // Stored or not, no memory tier may keep serving what the entry held before this response.
        invalidateMemory(forKey: key, bytesChanged: true)
        let version = versions.endWrite(memoryKey)
        switch outcome {
        case .success(var result):
            result.version = version
            if Self.baseKey(ofVariant: key) != nil { await registerVariant(key) }
            if mayShare { await shareDownload(result, key: key) }
            return (result, .stored)
        case .failure(let error):
            // Tolerated: the body is complete, so the waiting requests still get it (as data).
            let reason = error as? StashError ?? StashError(.io, "Cannot store \(url.absoluteString).", cause: error)
            counters.withLock { $0.storeFailures += 1 }
            logger.warning(
                "Downloaded but could not store", metadata: ["url": "\(url.absoluteString)", "error": "\(reason)"])
            return (try unstored(body, metadata: metadata, reason: reason), .notStored)
        }
    }

    /// Why the response to `request` must not be stored, or `nil` when it may be: under
    /// ``CachePolicy/http`` the RFC 9111 §3 rules of the loader's kind; under the other policies
    /// (which store every 2xx) only a shared loader's rules against leaking one user's response
    /// to another (§3.5, §5.2.2.5, §5.2.2.7).
    private func unstorableReason(_ response: HTTPURLResponse, request: URLRequest, url: URL, policy: CachePolicy)
        -> StashError?
    {
        let control = response.value(forHTTPHeaderField: "Cache-Control").map { "Cache-Control: \($0)" }
        let what = control ?? "no caching headers"
        if policy == .http {
            let storable = httpPolicy.storableHeaders(
                method: "GET", requestHeaders: HTTPFields(request), status: response.statusCode,
                responseHeaders: HTTPFields(response))
            guard storable == nil else { return nil }
            return StashError(
                .invalidResponse,
                "GET \(url.absoluteString) answered \(response.statusCode) with \(what), which RFC 9111 forbids a \(configuration.cacheKind == .shared ? "shared" : "private") cache to store (or the request said no-store), so it was not cached and has no cache file: load it with data(for:), or use the .cacheFirst policy to cache it anyway."
            )
        }
        guard configuration.cacheKind == .shared, !Self.sharedCacheMayKeep(request: request, response: response) else {
            return nil
        }
        return StashError(
            .invalidResponse,
            "GET \(url.absoluteString) answered with \(what)\(request.value(forHTTPHeaderField: "Authorization") != nil ? " to a request with Authorization" : ""): a shared cache must never store it (RFC 9111 §3.5, §5.2.2.7), so it was not cached and has no cache file: load it with data(for:), or give the loader the .private cacheKind if it serves one user."
        )
    }

    /// A body that is not in the cache, in memory for the requests that wait for data.
    private func unstored(_ body: BodyReceiver.Body, metadata: DiskCache.Metadata, reason: StashError) throws
        -> LoadResult
    {
        let data: Data
        switch body {
        case .memory(let bytes):
            data = bytes
        case .file(let file, _):
            defer { file.remove() }
            do {
                // Not Data(contentsOf:): on Linux it leaks a 4 KiB buffer for an empty file.
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file.path))
                defer { try? handle.close() }
                data = try handle.readToEnd() ?? Data()
            } catch {
                throw StashError(.io, "Cannot read the downloaded body at \(file.path).", cause: error)
            }
        }
        return LoadResult(metadata: metadata, source: .network, data: data, unstoredReason: reason)
    }

    private func discard(_ body: BodyReceiver.Body) {
        if case .file(let file, _) = body { file.remove() }
    }

    /// Removes `key`'s partial download, which the server would not continue, and returns the
    /// error that restarts the transfer without it.
    private func discardPartial(key: String, url: URL, reason: String) -> RestartDownload {
        if let partial = PartialDownload.find(in: downloadsDirectory, key: key) { partial.file.remove() }
        PartialDownload.removeRecord(in: downloadsDirectory, key: key)
        logger.debug(
            "Starting the download over", metadata: ["url": "\(url.absoluteString)", "reason": "\(reason)"])
        return RestartDownload()
    }
}
