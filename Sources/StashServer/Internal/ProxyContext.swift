#if Serve
    import Foundation
    import Logging
    import NIOCore
    import NIOHTTP1
    import Stash

    /// What every connection of one proxy shares: the origin, the cache chain, the origin client,
    /// the fill coordinator, the metrics and the access log.
    final class ProxyContext: Sendable {
        let origin: URL
        /// The origin's URL without a trailing slash, that request targets are appended to.
        let originPrefix: String
        let store: ResponseStore
        let client: OriginClient
        /// Concurrent misses of a URL coalesce here (the store's, which invalidations mark).
        var fills: FillCoordinator { store.fills }
        let metrics: ProxyMetrics
        let accessLog: AccessLog?
        let logger: Logger
        let originTimeout: TimeAmount
        /// Responses whose bodies are longer are streamed through but not stored.
        let maximumStoredBody: Int
        let spoolDirectory: URL
        /// The operator's rules for request targets, forwarding fields, purges and ranges.
        let options: ServeOptions
        /// Base keys known to have stored partial content (RFC 9111 §3.3), that a request without
        /// `Range` tries to complete; see ``Exchange/notePartial(_:)``.
        let partials = LockedValue(Set<String>())

        init(
            origin: URL, store: ResponseStore, client: OriginClient, metrics: ProxyMetrics, accessLog: AccessLog?,
            logger: Logger, originTimeout: TimeAmount, maximumStoredBody: Int, spoolDirectory: URL,
            options: ServeOptions
        ) {
            self.origin = origin
            var prefix = origin.absoluteString
            while prefix.hasSuffix("/") { prefix.removeLast() }
            self.originPrefix = prefix
            self.store = store
            self.client = client
            self.metrics = metrics
            self.accessLog = accessLog
            self.logger = logger
            self.originTimeout = originTimeout
            self.maximumStoredBody = maximumStoredBody
            self.spoolDirectory = spoolDirectory
            self.options = options
        }

        /// Removes what a fill of `base` stored: its response, `Vary` marker and partial content.
        func discard(base: String) async {
            await store.remove(base: base)
            await store.removePartial(base: base)
            partials.withLock { _ = $0.remove(base) }
        }

        /// Runs `store`, which stores what a fetch of `base` got, unless its fill was invalidated.
        ///
        /// `false`: the fill under way was invalidated since it began (RFC 9111 §4.4: an unsafe
        /// method's answer or a purge), and nothing is stored (the caller discards the body). When
        /// an invalidation arrives while `store` runs, what it stored is removed before the
        /// invalidation returns (``FillCoordinator/beginStore(_:)``); one that arrives after removes
        /// it itself. Either way no request after the invalidation gets the answer (the fill's own
        /// client still does).
        @discardableResult
        func storeFetched(base: String, _ store: () async -> Void) async -> Bool {
            await fills.storing(base, store) { await discard(base: base) }
        }

        /// Records a finished exchange in the metrics and the access log.
        func finished(_ record: ExchangeRecord) {
            metrics.record(record)
            accessLog?.write(record)
        }
    }
#endif
