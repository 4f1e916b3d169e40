#if Benchmarks
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres

    /// Several processes, each with its own disk cache, behind one PostgreSQL shared tier, load the
    /// same photos in their own random orders, all at once: the origin should serve each photo once,
    /// and every body must arrive intact.
    struct FleetBenchmark {
        let url: String
        let instances: Int
        let photos: Int

        struct Report: Codable {
            var instance: Int
            var network = 0
            var shared = 0
            var disk = 0
            var memory = 0
            var damaged = 0
            var seconds = 0.0
        }

        func run() async throws {
            let origin = try await BenchmarkOrigin.start()
            let table = "fleet_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let tier = try await PostgresSharedTier(url: url, configuration: .init(table: String(table)))
            let start = ContinuousClock.now
            let reports = try await withThrowingTaskGroup(of: Report.self) { group in
                for instance in 0..<instances {
                    group.addTask {
                        try await Self.spawn([
                            "fleet-worker", "\(instance)", "\(origin.port)", String(table), "\(photos)",
                        ])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.instance < $1.instance }
            }
            let elapsed = seconds(ContinuousClock.now - start)
            print(
                "Fleet: \(instances) processes, \(photos) photos each in its own random order, one PostgreSQL shared tier"
            )
            print("instance  origin  shared  disk  damaged  seconds")
            for report in reports {
                print(
                    pad("\(report.instance)", 8) + pad("\(report.network)", 8) + pad("\(report.shared)", 8)
                        + pad("\(report.disk + report.memory)", 6) + pad("\(report.damaged)", 9)
                        + pad(format(report.seconds, 2), 9))
            }
            let requests = origin.requests.withLock { $0 }
            let damaged = reports.map(\.damaged).reduce(0, +)
            print(
                "origin requests: \(requests) for \(photos) photos; damaged bodies: \(damaged); wall time \(format(elapsed, 2)) s"
            )
            print("shared tier (parent's view): \(try await tier.totals())")
            try await tier.removeAll()
            tier.shutdown()
            await origin.stop()
            if requests != photos || damaged != 0 { exit(1) }
        }

        static func spawn(_ arguments: [String]) async throws -> Report {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    do {
                        let process = Process()
                        let output = Pipe()
                        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                        process.arguments = arguments
                        process.standardOutput = output
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        continuation.resume(returning: try JSONDecoder().decode(Report.self, from: data))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }

        /// One instance: `fleet-worker INSTANCE PORT TABLE PHOTOS`; prints its ``Report`` as JSON.
        static func worker(_ arguments: [String], url: String) async throws {
            guard arguments.count == 4, let instance = Int(arguments[0]), let port = Int(arguments[1]),
                let photos = Int(arguments[3])
            else { throw BenchmarkError.wrongBody }
            let tier = try await PostgresSharedTier(url: url, configuration: .init(table: arguments[2]))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-fleet-" + UUID().uuidString)
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = ResourceLoader.Configuration()
            configuration.sharedTier = tier
            let loader = ResourceLoader(
                cache: try DiskCache(directory: directory, sizeLimit: .megabytes(500)), configuration: configuration)
            var generator = SeededGenerator(seed: UInt64(instance + 1))
            let order = Array(0..<photos).shuffled(using: &generator)
            var report = Report(instance: instance)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: (Int, ResourceResponse).self) { group in
                var next = 0
                func add() {
                    guard next < order.count else { return }
                    let id = order[next]
                    next += 1
                    group.addTask {
                        let photo = URL(string: "http://127.0.0.1:\(port)/photo/\(id)")!
                        return (id, try await loader.response(for: ResourceRequest(photo)))
                    }
                }
                for _ in 0..<6 { add() }
                while let (id, response) = try await group.next() {
                    if response.data != BenchmarkOrigin.photo(id) { report.damaged += 1 }
                    switch response.source {
                    case .network, .revalidated: report.network += 1
                    case .shared: report.shared += 1
                    case .disk, .stale: report.disk += 1
                    case .memory: report.memory += 1
                    }
                    add()
                }
            }
            await loader.waitForSharedTierWrites()
            report.seconds = seconds(ContinuousClock.now - start)
            tier.shutdown()
            print(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        }
    }

    /// SplitMix64: the same order for the same seed, on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
#endif
