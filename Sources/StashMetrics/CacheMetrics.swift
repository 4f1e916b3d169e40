#if Metrics
    import CoreMetrics
    import Stash
    import StashHTTP

    /// Reports a cache's statistics as swift-metrics counters and gauges, with dimensions for the
    /// cache's name and the tier.
    ///
    /// Stash itself emits no metrics: its caches only count, cheaply, in their `statistics`. A
    /// `CacheMetrics` reads those counters when you call ``update()`` (or every few seconds in
    /// ``run(every:)``) and forwards the increase since the last reading to swift-metrics, which
    /// sends it to the backend bootstrapped with `MetricsSystem.bootstrap` (Prometheus through
    /// swift-prometheus, StatsD, OpenTelemetry…). Without a `CacheMetrics`, or before a backend is
    /// bootstrapped, nothing is reported.
    ///
    /// ```swift
    /// let photos = try Cache(directory: .caches("photos"), sizeLimit: .megabytes(200), codec: .data)
    /// let metrics = CacheMetrics(name: "photos", cache: photos)
    /// Task { try await metrics.run(every: .seconds(10)) }
    /// ```
    ///
    /// Each metric has the dimensions `cache` (the name given here) and `tier` (`memory`, `disk` or
    /// `network`); see ``Metric`` for the labels.
    public final class CacheMetrics: Sendable {
        /// The metrics a `CacheMetrics` reports.
        public enum Metric: String, Sendable, CaseIterable {
            /// Lookups that found a value in the tier (counter).
            case hits = "stash_cache_hits_total"
            /// Lookups that found nothing in the tier (counter).
            case misses = "stash_cache_misses_total"
            /// Stored entries served although no longer fresh, under stale-if-error or
            /// stale-while-revalidate (counter, `tier` `disk`).
            case staleServes = "stash_cache_stale_serves_total"
            /// Entries dropped to respect a limit (counter).
            case evictions = "stash_cache_evictions_total"
            /// Values the admission policy turned away at the store that wrote them, also counted
            /// in ``evictions`` (counter).
            case notAdmitted = "stash_cache_not_admitted_total"
            /// Value bytes read from the tier; for `network`, body bytes received (counter).
            case bytesRead = "stash_cache_read_bytes_total"
            /// Value bytes written to the tier (counter).
            case bytesWritten = "stash_cache_written_bytes_total"
            /// The tier's current size: bytes on disk, the total cost in memory, which is bytes for
            /// `Data` and `String` values and a loader's bodies (gauge).
            case size = "stash_cache_size_bytes"
            /// The tier's current number of entries (gauge).
            case entries = "stash_cache_entries"
            /// HTTP requests a loader sent, retries and revalidations included (counter).
            case requests = "stash_http_requests_total"
            /// Revalidations answered `304 Not Modified` (counter).
            case notModified = "stash_http_not_modified_total"
            /// Attempts a loader repeated after a transient failure (counter).
            case retries = "stash_http_retries_total"
            /// Transfers that failed after their retries (counter).
            case failedTransfers = "stash_http_failed_transfers_total"

            /// The metric's label, as given to swift-metrics.
            public var label: String { rawValue }

            /// Whether the metric is a gauge (a current value) rather than a counter.
            public var isGauge: Bool { self == .size || self == .entries }
        }

        /// The `cache` dimension of every metric.
        public let name: String
        private let read: @Sendable () -> [StatisticsReading]
        private let factory: any MetricsFactory
        private let state = LockedValue(State())

        private struct Key: Hashable {
            var metric: Metric
            var tier: String
        }

        private enum Handle {
            case counter(Counter)
            case gauge(Gauge)
        }

        private struct State {
            /// The counters' values at the previous update.
            var last: [Key: Int] = [:]
            var handles: [Key: Handle] = [:]
        }

        /// Reports the memory and disk tiers of a `Cache`.
        ///
        /// - Parameters:
        ///   - name: The value of the `cache` dimension.
        ///   - cache: The cache whose statistics are read.
        ///   - factory: Where metrics are created. Defaults to the one bootstrapped in `MetricsSystem`.
        public convenience init<Value>(
            name: String, cache: Cache<Value>, factory: any MetricsFactory = MetricsSystem.factory
        ) {
            self.init(name: name, factory: factory) {
                Self.readings(of: cache.memory) + Self.readings(of: cache.disk)
            }
        }

        /// Reports a `DiskCache`.
        ///
        /// - Parameters:
        ///   - name: The value of the `cache` dimension.
        ///   - disk: The disk cache whose statistics are read.
        ///   - factory: Where metrics are created. Defaults to the one bootstrapped in `MetricsSystem`.
        public convenience init(name: String, disk: DiskCache, factory: any MetricsFactory = MetricsSystem.factory) {
            self.init(name: name, factory: factory) { Self.readings(of: disk) }
        }

        /// Reports a `ResourceLoader`: its memory tier of bodies, its disk cache, and its
        /// network counters.
        ///
        /// - Parameters:
        ///   - name: The value of the `cache` dimension.
        ///   - loader: The loader whose statistics are read.
        ///   - factory: Where metrics are created. Defaults to the one bootstrapped in `MetricsSystem`.
        public convenience init(
            name: String, loader: ResourceLoader, factory: any MetricsFactory = MetricsSystem.factory
        ) {
            self.init(name: name, factory: factory) {
                Self.readings(of: loader.memory) + Self.readings(of: loader.cache)
                    + StatisticsReading.loader(loader.statistics)
            }
        }

        private init(
            name: String, factory: any MetricsFactory, read: @escaping @Sendable () -> [StatisticsReading]
        ) {
            self.name = name
            self.factory = factory
            self.read = read
        }

        /// Reads the statistics and reports them: each counter grows by the increase since the
        /// previous update, each gauge is set to the current value.
        ///
        /// Call it periodically, or use ``run(every:)``. Concurrent updates are safe: no increase is
        /// reported twice or lost, though a gauge may then keep the earlier of two readings.
        ///
        /// - Complexity: O(1): a few reads of in-memory counters and of the disk index's running totals.
        public func update() {
            let readings = read()
            let values = state.withLock { state -> [(Key, Int)] in
                readings.map { reading in
                    let key = Key(metric: reading.metric, tier: reading.tier)
                    guard !reading.metric.isGauge else { return (key, reading.value) }
                    let last = state.last[key, default: 0]
                    state.last[key] = max(reading.value, last)
                    return (key, max(0, reading.value - last))
                }
            }
            for (key, value) in values {
                switch handle(for: key) {
                case .gauge(let gauge): gauge.record(value)
                case .counter(let counter): if value > 0 { counter.increment(by: value) }
                }
            }
        }

        /// Calls ``update()`` every `interval` until the calling task is cancelled.
        ///
        /// - Parameter interval: The time between updates. Defaults to 10 seconds.
        /// - Throws: `CancellationError` when the task is cancelled.
        public func run(every interval: Duration = .seconds(10)) async throws {
            precondition(interval > .zero, "CacheMetrics.run(every:) needs a positive interval, got \(interval).")
            while true {
                update()
                try await Task.sleep(for: interval)
            }
        }

        /// The metric for `key`, created on first use.
        ///
        /// The factory is the backend's code, so it runs outside the lock; if two updates race to
        /// create one metric, the first stored wins.
        private func handle(for key: Key) -> Handle {
            if let handle = state.withLock({ $0.handles[key] }) { return handle }
            let dimensions = [("cache", name), ("tier", key.tier)]
            let created: Handle =
                key.metric.isGauge
                ? .gauge(Gauge(label: key.metric.label, dimensions: dimensions, factory: factory))
                : .counter(Counter(label: key.metric.label, dimensions: dimensions, factory: factory))
            return state.withLock { state in
                if let existing = state.handles[key] { return existing }
                state.handles[key] = created
                return created
            }
        }

        private static func readings<Key, Value>(of memory: MemoryCache<Key, Value>) -> [StatisticsReading] {
            StatisticsReading.memory(memory.statistics, totalCost: memory.totalCost, totalCount: memory.totalCount)
        }

        private static func readings(of disk: DiskCache) -> [StatisticsReading] {
            // The totals are one indexed read; if the index cannot be read now, the gauges keep their
            // last value and the counters (in memory) are still reported.
            let size = try? disk.totalSize.bytes
            let count = try? disk.totalCount
            return StatisticsReading.disk(disk.statistics, totalSize: size, totalCount: count)
        }
    }
#endif
