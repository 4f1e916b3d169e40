#if Benchmarks
    import Foundation
    import Stash
    import StashAsyncHTTPClient
    import StashHTTP

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// One measured run, in a process of its own: every download through a `ResourceLoader` with
    /// one transport into a fresh cache, timed, with the process's peak resident memory.
    struct ClientRun {
        enum Transport: String, CaseIterable {
            case urlSession = "urlsession"
            case asyncHTTPClient = "async-http-client"
        }

        /// What a run reports, as one JSON line.
        struct Result: Codable {
            var transport: String
            var downloads: Int
            var concurrency: Int
            var bytes: Int
            var seconds: Double
            /// The process's peak resident memory when the transport was ready, before any download.
            var baselineRSSKiB: Int
            /// The process's peak resident memory after the last download.
            var peakRSSKiB: Int

            var jsonLine: String {
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                return String(decoding: try! encoder.encode(self), as: UTF8.self)
            }
        }

        var transport: Transport
        var origin: String
        var sizes: [Int]
        var concurrency: Int

        func measure() async throws -> Result {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("stash-transport-bench-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = try DiskCache(directory: directory, sizeLimit: .gigabytes(2))
            let http: any HTTPTransport =
                switch transport {
                case .urlSession: URLSessionTransport()
                case .asyncHTTPClient: AsyncHTTPClientTransport()
                }
            // No memory tier and no retries: the run measures the transport and the disk, once each.
            let loader = ResourceLoader(
                cache: cache, transport: http,
                configuration: ResourceLoader.Configuration(
                    maximumConcurrentTransfers: concurrency, memoryCostLimit: .zero, retryPolicy: .none))
            let urls = sizes.enumerated().map { URL(string: "\(origin)/body/\($0.offset)/\($0.element)")! }
            let baseline = Self.peakRSSKiB()
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                func add() {
                    let (url, size) = (urls[next], sizes[next])
                    next += 1
                    group.addTask {
                        let file = try await loader.fileURL(for: url)
                        let stored = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
                        guard stored == size else {
                            throw BenchmarkError("\(url): stored \(stored ?? -1) bytes, not \(size)")
                        }
                    }
                }
                while next < min(concurrency, urls.count) { add() }
                while try await group.next() != nil {
                    if next < urls.count { add() }
                }
            }
            let elapsed = ContinuousClock.now - start
            let peak = Self.peakRSSKiB()
            try verify(cache: cache, urls: urls)
            return Result(
                transport: transport.rawValue, downloads: sizes.count, concurrency: concurrency,
                bytes: sizes.reduce(0, +),
                seconds: Double(elapsed.components.seconds)
                    + Double(elapsed.components.attoseconds) / 1e18,
                baselineRSSKiB: baseline, peakRSSKiB: peak)
        }

        /// Checks every stored body byte for byte (after the measurement).
        private func verify(cache: DiskCache, urls: [URL]) throws {
            for (index, url) in urls.enumerated() {
                guard let data = try cache.data(forKey: url.absoluteString),
                    data == Workload.body(index: index, size: sizes[index])
                else { throw BenchmarkError("\(url): the stored body differs from the origin's") }
            }
        }

        /// `getrusage`'s peak resident set size, in KiB.
        static func peakRSSKiB() -> Int {
            var usage = rusage()
            #if canImport(Darwin)
                getrusage(RUSAGE_SELF, &usage)
                return Int(usage.ru_maxrss) / 1024  // bytes on Apple platforms
            #else
                getrusage(RUSAGE_SELF.rawValue, &usage)
                return Int(usage.ru_maxrss)  // KiB on Linux
            #endif
        }
    }

    struct BenchmarkError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
#endif
