#if Serve
    import CoreMetrics
    import Prometheus

    /// The proxy's counters, through swift-metrics into a Prometheus registry that the metrics
    /// endpoint renders.
    final class ProxyMetrics: Sendable {
        let registry: PrometheusCollectorRegistry
        private let requests: [CacheStatus: CoreMetrics.Counter]
        private let hits: [ResponseStore.Tier: CoreMetrics.Counter]
        private let bytes: [String: CoreMetrics.Counter]
        private let misses: CoreMetrics.Counter

        init() {
            let registry = PrometheusCollectorRegistry()
            let factory = PrometheusMetricsFactory(registry: registry)
            self.registry = registry
            let statuses: [CacheStatus] = [.hit, .miss, .revalidated, .expired, .bypass, .onlyIfCached, .stale]
            requests = Dictionary(
                uniqueKeysWithValues: statuses.map {
                    (
                        $0,
                        CoreMetrics.Counter(
                            label: "stash_serve_requests_total", dimensions: [("cache", $0.rawValue)], factory: factory)
                    )
                })
            let tiers: [ResponseStore.Tier] = [.memory, .disk, .shared]
            hits = Dictionary(
                uniqueKeysWithValues: tiers.map {
                    (
                        $0,
                        CoreMetrics.Counter(
                            label: "stash_serve_hits_total", dimensions: [("tier", $0.rawValue)], factory: factory)
                    )
                })
            bytes = Dictionary(
                uniqueKeysWithValues: ["memory", "disk", "shared", "origin"].map {
                    (
                        $0,
                        CoreMetrics.Counter(
                            label: "stash_serve_bytes_total", dimensions: [("tier", $0)], factory: factory)
                    )
                })
            misses = CoreMetrics.Counter(label: "stash_serve_misses_total", factory: factory)
        }

        /// Counts one finished exchange.
        func record(_ record: ExchangeRecord) {
            requests[record.cacheStatus]?.increment()
            if let tier = record.tier, [.hit, .revalidated, .stale].contains(record.cacheStatus) {
                hits[tier]?.increment()
                bytes[tier.rawValue]?.increment(by: record.bytes)
            } else {
                if record.cacheStatus == .miss || record.cacheStatus == .expired { misses.increment() }
                bytes["origin"]?.increment(by: record.bytes)
            }
        }

        /// The metrics in Prometheus's text format.
        func render() -> [UInt8] { registry.emitToBuffer() }
    }
#endif
