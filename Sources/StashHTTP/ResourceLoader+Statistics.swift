import Foundation
import Stash

extension ResourceLoader {
    /// Counters since the loader was created.
    public struct Statistics: Sendable, Hashable {
        /// HTTP requests sent, retries and revalidations included.
        public var requests = 0
        /// Body bytes received from the network.
        public var bytesReceived = 0
        /// Requests answered from a memory tier: bodies in ``ResourceLoader/memory``, or decoded
        /// values in a ``ValueLoader``'s cache.
        public var memoryHits = 0
        /// Requests answered from the disk cache without a network request.
        public var diskHits = 0
        /// Bodies that a ``ValueLoader`` (or ``ResourceLoader/value(for:codec:)``) could not
        /// decode; each failed its request with `StashError.Code.decodingFailed` and was
        /// removed from the cache.
        public var decodingFailures = 0
        /// Requests answered by a transfer (a full body or a revalidation).
        public var networkLoads = 0
        /// Requests that joined a transfer already under way for the same key instead of
        /// starting their own.
        public var coalescedWaiters = 0
        /// Conditional requests sent (`If-None-Match` / `If-Modified-Since`).
        public var revalidations = 0
        /// Revalidations answered `304 Not Modified`.
        public var notModified = 0
        /// Requests answered with a stored entry past its freshness (``ResourceResponse/Source/stale``):
        /// because the origin failed, or within a stale-while-revalidate window.
        public var staleServes = 0
        /// Stale-while-revalidate serves that asked for a background revalidation; those asking
        /// while one is under way join it (see ``coalescedWaiters``) rather than send another.
        public var backgroundRevalidations = 0
        /// Transfers that resumed a partial download with `Range` and received the rest (`206`).
        public var resumedDownloads = 0
        /// Attempts repeated after a transient failure.
        public var retries = 0
        /// Stored entries removed because an unsafe request (`POST`, `PUT`, `DELETE`, `PATCH`, …)
        /// to their URL, or to a response naming it in `Location` / `Content-Location`, succeeded
        /// (RFC 9111 §4.4).
        public var invalidations = 0
        /// Transfers that ended with an error (after their retries).
        public var failedTransfers = 0
        /// Transfers stopped because every waiting request was cancelled, or by ``cancelAll()``.
        public var cancelledTransfers = 0
        /// Complete bodies that could not be stored in the disk cache (a tolerated failure: the
        /// waiting requests still got them).
        public var storeFailures = 0
        /// The largest response body the loader held in memory at once.
        ///
        /// Bodies from the disk cache's inline threshold up stream to a file instead, so this stays below
        /// that threshold however large the responses are.
        public var largestBufferedBody = 0
    }

    /// Something the loader did, reported through ``Configuration/onEvent`` outside any lock.
    ///
    /// Use it for logging, metrics and tests; do no slow work in the handler.
    public enum Event: Sendable, Hashable {
        /// A request joined the transfer already under way for `key`.
        case coalesced(key: String)
        /// A transfer for `key` is waiting for a free slot (the concurrency limit is reached, a
        /// higher-priority transfer is ahead, or the loader is suspended).
        case queued(key: String)
        /// An HTTP request for `key` was sent; `attempt` counts from 1.
        case requestSent(key: String, url: URL, attempt: Int, isConditional: Bool)
        /// The transfer for `key` ended.
        case finished(key: String, outcome: TransferOutcome)
    }

    /// How a transfer ended.
    public enum TransferOutcome: Sendable, Hashable {
        /// A complete body was received and stored.
        case stored
        /// A complete body was received but not stored (`no-store` under
        /// ``CachePolicy/http``, or the disk cache refused it).
        case notStored
        /// The server confirmed the stored entry with `304 Not Modified`.
        case notModified
        /// The origin failed with an error of this code, and the stored, stale entry is served
        /// instead (stale-if-error); nothing was stored.
        case servedStale(StashError.Code)
        /// The entry turned out to be in the cache already; no request was needed.
        case alreadyCached
        /// The transfer failed with an error of this code; nothing was stored.
        case failed(StashError.Code)
        /// Every waiting request was cancelled (or ``cancelAll()`` was called); nothing was stored.
        case cancelled
    }
}
