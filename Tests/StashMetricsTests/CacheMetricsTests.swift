#if Metrics
    import Foundation
    import Logging
    import MetricsTestKit
    import Stash
    import StashMetrics
    import Testing

    @testable import StashHTTP

    /// The swift-metrics bridge: statistics become counters and gauges with `cache` and `tier`
    /// dimensions, reported only when asked, each increase once.
    @Suite struct CacheMetricsTests {
        private func counter(_ metrics: TestMetrics, _ metric: CacheMetrics.Metric, _ tier: String) throws -> Int64 {
            try metrics.expectCounter(metric.label, [("cache", "photos"), ("tier", tier)]).totalValue
        }

        private func gauge(_ metrics: TestMetrics, _ metric: CacheMetrics.Metric, _ tier: String) throws -> Double? {
            try metrics.expectGauge(metric.label, [("cache", "photos"), ("tier", tier)]).lastValue
        }

        @Test func reportsEachTiersHitsMissesBytesAndSizes() throws {
            try withTemporaryDirectorySync { directory in
                let cache = try Cache<Data>(directory: directory, codec: .data)
                let metrics = TestMetrics()
                let reporter = CacheMetrics(name: "photos", cache: cache, factory: metrics)
                for key in ["a", "b", "c"] { try cache.store(Data(count: 100), forKey: key) }
                _ = try cache.value(forKey: "a")  // memory hit
                cache.memory.removeAll()
                _ = try cache.value(forKey: "b")  // memory miss, disk hit
                _ = try cache.value(forKey: "x")  // miss in both
                reporter.update()

                #expect(try counter(metrics, .hits, "memory") == 1)
                #expect(try counter(metrics, .misses, "memory") == 2)
                #expect(try counter(metrics, .hits, "disk") == 1)
                #expect(try counter(metrics, .misses, "disk") == 1)
                #expect(try counter(metrics, .bytesWritten, "disk") == 300)
                #expect(try counter(metrics, .bytesRead, "disk") == 100)
                #expect(try gauge(metrics, .size, "disk") == 300)
                #expect(try gauge(metrics, .entries, "disk") == 3)
                #expect(try gauge(metrics, .size, "memory") == 100)
                #expect(try gauge(metrics, .entries, "memory") == 1)
            }
        }

        @Test func nothingIsReportedBeforeTheFirstUpdate() throws {
            try withTemporaryDirectorySync { directory in
                let cache = try Cache<Data>(directory: directory, codec: .data)
                let metrics = TestMetrics()
                let reporter = CacheMetrics(name: "photos", cache: cache, factory: metrics)
                try cache.store(Data(count: 10), forKey: "a")
                _ = try cache.value(forKey: "a")
                #expect(metrics.counters(label: CacheMetrics.Metric.hits.label).isEmpty)
                reporter.update()
                #expect(metrics.counters(label: CacheMetrics.Metric.hits.label).count == 2)
            }
        }

        @Test func eachUpdateAddsOnlyTheIncreaseSinceThePrevious() throws {
            try withTemporaryDirectorySync { directory in
                let cache = try Cache<Data>(directory: directory, codec: .data)
                let metrics = TestMetrics()
                let reporter = CacheMetrics(name: "photos", cache: cache, factory: metrics)
                try cache.store(Data(count: 10), forKey: "a")
                _ = try cache.value(forKey: "a")
                _ = try cache.value(forKey: "a")
                reporter.update()
                reporter.update()  // no change: nothing added
                _ = try cache.value(forKey: "a")
                reporter.update()
                let hits = try metrics.expectCounter(
                    CacheMetrics.Metric.hits.label, [("cache", "photos"), ("tier", "memory")])
                #expect(hits.values == [2, 1])
                #expect(hits.totalValue == 3)
            }
        }

        @Test func diskEvictionsAreCounted() throws {
            try withTemporaryDirectorySync { directory in
                var configuration = DiskCache.Configuration(sizeLimit: .bytes(1000))
                configuration.evictionPolicy = .leastRecentlyUsed
                let disk = try DiskCache(directory: directory, configuration: configuration)
                let metrics = TestMetrics()
                let reporter = CacheMetrics(name: "photos", disk: disk, factory: metrics)
                for key in ["a", "b", "c"] { try disk.store(Data(count: 400), forKey: key) }
                reporter.update()
                #expect(try counter(metrics, .evictions, "disk") == 1)
                #expect(try gauge(metrics, .entries, "disk") == 2)
                #expect(try gauge(metrics, .size, "disk") == 800)
            }
        }

        /// A value the default policy turns away at its store: larger than the window (60 of 100
        /// bytes' worth), requested less per byte than the entries it would displace.
        @Test func writesTurnedAwayAreCountedApart() throws {
            try withTemporaryDirectorySync { directory in
                let disk = try DiskCache(
                    directory: directory, configuration: .init(sizeLimit: .bytes(100_000), lowWaterMark: 1.0))
                let metrics = TestMetrics()
                let reporter = CacheMetrics(name: "photos", disk: disk, factory: metrics)
                for i in 0..<5 { try disk.store(Data(count: 10_000), forKey: "m\(i)") }
                try disk.store(Data(count: 60_000), forKey: "big")
                reporter.update()
                #expect(try counter(metrics, .notAdmitted, "disk") == 1)
                #expect(try counter(metrics, .evictions, "disk") == 1)
                #expect(try gauge(metrics, .entries, "disk") == 5)
            }
        }

        @Test func loaderReportsItsTiersAndTheNetwork() async throws {
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let cache = try DiskCache(directory: directory, sizeLimit: .megabytes(10))
                    let loader = ResourceLoader(
                        cache: cache, configuration: .init(retryPolicy: .none),
                        logger: Logger(label: "stash.metrics.tests")
                    )
                    let metrics = TestMetrics()
                    let reporter = CacheMetrics(name: "photos", loader: loader, factory: metrics)
                    let url = server.url("/photo/50000")
                    _ = try await loader.data(for: url)  // from the network
                    _ = try await loader.data(for: url)  // from memory
                    reporter.update()
                    #expect(try counter(metrics, .requests, "network") == 1)
                    #expect(try counter(metrics, .bytesRead, "network") == 50_000)
                    #expect(try counter(metrics, .hits, "memory") == 1)
                    #expect(try counter(metrics, .bytesWritten, "disk") == 50_000)
                    #expect(try gauge(metrics, .size, "disk") == 50_000)
                    #expect(try gauge(metrics, .size, "memory") == 50_000)
                    #expect(try counter(metrics, .staleServes, "disk") == 0)
                }
            }
        }
    }

    /// A fresh temporary directory for a synchronous test, removed afterwards.
    private func withTemporaryDirectorySync(_ body: (URL) throws -> Void) throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("stash-metrics-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        try body(url)
    }
#endif
