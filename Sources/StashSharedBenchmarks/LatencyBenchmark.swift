#if Benchmarks
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres

    /// Shared-tier hits against a download from the in-process origin and a local disk hit:
    /// latency percentiles for 32 KiB, then throughput for 1 KiB, 256 KiB and 2 MiB with 1 and 8
    /// concurrent loads.
    struct LatencyBenchmark {
        let url: String

        enum Source: String, CaseIterable {
            case shared = "shared-tier hit (PostgreSQL, loopback)"
            case disk = "local disk hit (loader, memory tier off)"
            case origin = "origin download (loader, .reload: GET + disk write)"
        }

        func run() async throws {
            let origin = try await BenchmarkOrigin.start()
            let table = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let tier = try await PostgresSharedTier(
                url: url, configuration: .init(sizeLimit: .gigabytes(4), table: String(table)))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-bench-" + UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: directory) }
            let disk = try DiskCache(directory: directory, sizeLimit: .gigabytes(2))
            let loader = ResourceLoader(cache: disk, configuration: .init(memoryCostLimit: .zero))
            print(
                "Stash shared tier benchmark (release build; PostgreSQL 15 on 127.0.0.1; \(ProcessInfo.processInfo.activeProcessorCount) cores)"
            )

            print("\nLatency of one 32 KiB load, 1000 sequential loads after 100 warm-up loads")
            print("source".padding(toLength: 54, withPad: " ", startingAt: 0) + "   p50 ms   p90 ms   p99 ms")
            for source in Source.allCases {
                let operation = try await prepare(source, size: 32 * 1024, origin: origin, tier: tier, loader: loader)
                for _ in 0..<100 { try await operation() }
                var samples: [Duration] = []
                samples.reserveCapacity(1000)
                for _ in 0..<1000 {
                    let start = ContinuousClock.now
                    try await operation()
                    samples.append(ContinuousClock.now - start)
                }
                samples.sort()
                let row = [0.5, 0.9, 0.99].map { format(milliseconds(samples[Int(Double(samples.count - 1) * $0)])) }
                print(
                    source.rawValue.padding(toLength: 54, withPad: " ", startingAt: 0) + row.map { pad($0, 9) }.joined()
                )
            }

            print("\nThroughput (loads per second, MiB/s)")
            print("size      conc  " + Source.allCases.map { pad(String($0.rawValue.prefix(12)), 26) }.joined())
            for size in [1024, 256 * 1024, 2 * 1024 * 1024] {
                for concurrency in [1, 8] {
                    var cells: [String] = []
                    for source in Source.allCases {
                        let operation = try await prepare(
                            source, size: size, origin: origin, tier: tier, loader: loader)
                        let total = size <= 1024 ? 2000 : size <= 256 * 1024 ? 400 : 64
                        let start = ContinuousClock.now
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for worker in 0..<concurrency {
                                group.addTask {
                                    for _ in stride(from: worker, to: total, by: concurrency) { try await operation() }
                                }
                            }
                            try await group.waitForAll()
                        }
                        let seconds = seconds(ContinuousClock.now - start)
                        let perSecond = Double(total) / seconds
                        cells.append(
                            "\(format(perSecond, 0))/s, \(format(perSecond * Double(size) / 1_048_576, 1)) MiB/s")
                    }
                    print(
                        pad(sizeName(size), -8) + pad("\(concurrency)", 6) + "  " + cells.map { pad($0, 26) }.joined())
                }
            }
            print("\nShared tier: \(tier.statistics)")
            try await tier.removeAll()
            tier.shutdown()
            await origin.stop()
        }

        /// One load of `size` bytes from `source`, with the entry it needs already in place.
        private func prepare(
            _ source: Source, size: Int, origin: BenchmarkOrigin, tier: PostgresSharedTier, loader: ResourceLoader
        ) async throws -> @Sendable () async throws -> Void {
            let resource = URL(string: "http://127.0.0.1:\(origin.port)/bytes/\(size)/\(size)")!
            let expected = BenchmarkOrigin.bytes(size, seed: UInt64(size))
            switch source {
            case .shared:
                let key = "bench-\(size)"
                try await tier.store(SharedEntry(key: key, body: expected))
                return {
                    guard try await tier.entry(forKey: key)?.body.count == size else { throw BenchmarkError.wrongBody }
                }
            case .disk:
                _ = try await loader.data(for: resource)
                return {
                    guard try await loader.data(for: resource).count == size else { throw BenchmarkError.wrongBody }
                }
            case .origin:
                return {
                    guard try await loader.data(for: resource, cachePolicy: .reload).count == size else {
                        throw BenchmarkError.wrongBody
                    }
                }
            }
        }
    }

    enum BenchmarkError: Error { case wrongBody }

    func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1000 }

    func format(_ value: Double, _ decimals: Int = 3) -> String { String(format: "%.\(decimals)f", value) }

    /// Right-aligned in `width` columns (left-aligned for a negative width).
    func pad(_ text: String, _ width: Int) -> String {
        let padding = String(repeating: " ", count: max(0, abs(width) - text.count))
        return width < 0 ? text + padding : padding + text
    }

    func sizeName(_ size: Int) -> String { size >= 1_048_576 ? "\(size / 1_048_576) MiB" : "\(size / 1024) KiB" }
#endif
