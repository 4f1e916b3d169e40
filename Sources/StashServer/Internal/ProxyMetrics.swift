#if Serve
    import CoreMetrics
    import Prometheus

    /// The proxy's counters, through swift-metrics into a Prometheus registry that the metrics
    /// endpoint renders.
    final class ProxyMetrics: Sendable {
        let registry: PrometheusCollectorRegistry
        /// Requests by cache status, in the order of ``statuses``.
        private let requests: [CoreMetrics.Counter]
        /// Hits by tier, in the order of ``tiers``.
        private let hits: [CoreMetrics.Counter]
        /// Bytes sent by tier, in the order of ``tiers``.
        private let tierBytes: [CoreMetrics.Counter]
        private let originBytes: CoreMetrics.Counter
        private let misses: CoreMetrics.Counter

        private static let statuses: [CacheStatus] = [
            .hit, .miss, .revalidated, .expired, .bypass, .onlyIfCached, .stale,
        ]
        private static let tiers: [ResponseStore.Tier] = [.memory, .disk, .shared]

        init() {
            let registry = PrometheusCollectorRegistry()
            let factory = PrometheusMetricsFactory(registry: registry)
            self.registry = registry
            requests = Self.statuses.map {
                CoreMetrics.Counter(
                    label: "stash_serve_requests_total", dimensions: [("cache", $0.rawValue)], factory: factory)
            }
            hits = Self.tiers.map {
                CoreMetrics.Counter(
                    label: "stash_serve_hits_total", dimensions: [("tier", $0.rawValue)], factory: factory)
            }
            tierBytes = Self.tiers.map {
                CoreMetrics.Counter(
                    label: "stash_serve_bytes_total", dimensions: [("tier", $0.rawValue)], factory: factory)
            }
            originBytes = CoreMetrics.Counter(
                label: "stash_serve_bytes_total", dimensions: [("tier", "origin")], factory: factory)
            misses = CoreMetrics.Counter(label: "stash_serve_misses_total", factory: factory)
        }

        /// Counts one finished exchange.
        ///
        /// Runs once per request on the event loop: the counters are found by position, with no
        /// hashing and no array built per call.
        func record(_ record: ExchangeRecord) {
            requests[Self.index(of: record.cacheStatus)].increment()
            let servedFromTier: Bool
            switch record.cacheStatus {
            case .hit, .revalidated, .stale: servedFromTier = true
            case .miss, .expired, .bypass, .onlyIfCached: servedFromTier = false
            }
            if let tier = record.tier, servedFromTier {
                let index = Self.index(of: tier)
                hits[index].increment()
                tierBytes[index].increment(by: record.bytes)
            } else {
                if record.cacheStatus == .miss || record.cacheStatus == .expired { misses.increment() }
                originBytes.increment(by: record.bytes)
            }
        }

        /// A status's position in ``statuses``.
        private static func index(of status: CacheStatus) -> Int {
            switch status {
            case .hit: 0
            case .miss: 1
            case .revalidated: 2
            case .expired: 3
            case .bypass: 4
            case .onlyIfCached: 5
            case .stale: 6
            }
        }

        /// A tier's position in ``tiers``.
        private static func index(of tier: ResponseStore.Tier) -> Int {
            switch tier {
            case .memory: 0
            case .disk: 1
            case .shared: 2
            }
        }

        /// The metrics in Prometheus's text format.
        func render() -> [UInt8] { registry.emitToBuffer() }
    }
#endif
