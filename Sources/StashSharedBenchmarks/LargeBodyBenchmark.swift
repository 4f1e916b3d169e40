#if Benchmarks
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres

    /// A large body through the shared tier's streaming API.
    ///
    /// Stored from a file, read into a file, and a loader's shared hit that lands in its disk tier as a file; throughput (median of the
    /// rounds) and the process's resident memory over its baseline (VmRSS sampled on every chunk,
    /// and the kernel's peak VmHWM). Last, one read through the `Data` API for contrast.
    struct LargeBodyBenchmark {
        let url: String
        let size: Int
        let rounds: Int

        func run() async throws {
            let table =
                "bench_large_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
            let tier = try await PostgresSharedTier(
                url: url, configuration: .init(sizeLimit: .gigabytes(4), table: String(table)))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-bench-large-" + UUID().uuidString)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let input = directory.appendingPathComponent("body.in")
            let output = directory.appendingPathComponent("body.out")
            try writeBody(input, size: size, seed: 7)
            let expected = try await fileChecksum(input)
            let origin = try await BenchmarkOrigin.start()
            defer { Task { await origin.stop() } }
            let resource = URL(string: "http://127.0.0.1:\(origin.port)/large")!

            // Warm-up: one small round trip of each kind, so the baseline has its connections and buffers.
            let warmUp = directory.appendingPathComponent("warm-up")
            try writeBody(warmUp, size: 3 << 20, seed: 1)
            try await tier.store(SharedEntryHead(key: "warm-up", size: 3 << 20), bodyFromFileAt: warmUp)
            _ = try await tier.streamEntry(forKey: "warm-up", into: try SamplingFileSink(output))
            let baseline = residentKB("VmRSS")
            let hwmBefore = residentKB("VmHWM")

            var storeSeconds: [Double] = []
            var readSeconds: [Double] = []
            var loaderSeconds: [Double] = []
            for round in 0..<rounds {
                var start = ContinuousClock.now
                try await tier.store(
                    SharedEntryHead(key: resource.absoluteString, size: size),
                    body: SampledBody(base: try SharedFileBody(fileAt: input)))
                storeSeconds.append(seconds(ContinuousClock.now - start))

                start = ContinuousClock.now
                let head = try await tier.streamEntry(
                    forKey: resource.absoluteString, into: try SamplingFileSink(output))
                readSeconds.append(seconds(ContinuousClock.now - start))
                guard head?.size == size, try await fileChecksum(output) == expected else {
                    throw BenchmarkError.wrongBody
                }

                let disk = try DiskCache(
                    directory: directory.appendingPathComponent("disk-\(round)"), sizeLimit: .gigabytes(1))
                var configuration = ResourceLoader.Configuration(memoryCostLimit: .zero)
                configuration.sharedTier = tier
                let loader = ResourceLoader(cache: disk, configuration: configuration)
                start = ContinuousClock.now
                let response = try await loader.response(for: ResourceRequest(resource), delivery: .file)
                loaderSeconds.append(seconds(ContinuousClock.now - start))
                guard response.source == .shared, let file = response.fileURL, try await fileChecksum(file) == expected
                else {
                    throw BenchmarkError.wrongBody
                }
                try FileManager.default.removeItem(at: disk.directory)
            }
            let peak = memorySamples.value.peak
            let hwmStreaming = residentKB("VmHWM")

            let dataStart = ContinuousClock.now
            let entry = try await tier.entry(forKey: resource.absoluteString)
            let dataSeconds = seconds(ContinuousClock.now - dataStart)
            guard entry?.body.count == size else { throw BenchmarkError.wrongBody }
            let hwmData = residentKB("VmHWM")

            let mib = Double(size) / 1_048_576
            func rate(_ samples: [Double]) -> String { format(mib / median(samples), 0) + " MiB/s" }
            print("\n\(sizeName(size)) body through the shared tier (\(rounds) rounds, median; chunk rows of 1 MiB)")
            print("  streamed store from a file          " + rate(storeSeconds))
            print("  streamed read into a file           " + rate(readSeconds))
            print("  loader shared hit → disk tier file  " + rate(loaderSeconds))
            print("  Data read (entry(forKey:)), once    " + format(mib / dataSeconds, 0) + " MiB/s")
            print(
                "  resident memory over the baseline (\(baseline / 1024) MiB): streaming peak sampled "
                    + "\(format(Double(peak - baseline) / 1024, 1)) MiB (\(memorySamples.value.samples) samples), "
                    + "VmHWM +\(format(Double(max(0, hwmStreaming - max(baseline, hwmBefore))) / 1024, 1)) MiB; "
                    + "after one Data read VmHWM +\(format(Double(hwmData - max(baseline, hwmBefore)) / 1024, 1)) MiB")
            try await tier.removeAll()
            tier.shutdown()
        }

        private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    }
#endif
