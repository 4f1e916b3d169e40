#if Tool
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres

    /// The fleet demo, `stash demo --fleet N`.
    ///
    /// N instances of a server, each with its own cache directory, behind one PostgreSQL shared tier,
    /// browse the same gallery in their own random orders at the same time; then a new instance joins
    /// cold. The origin's own counter shows each photo downloaded once for the whole fleet.
    struct FleetDemo {
        let url: String
        let instances: Int
        let gallery: Gallery
        let json: Bool

        /// What one instance served, by tier.
        struct InstanceReport: Encodable {
            var instance: String
            var views = 0
            var origin = 0
            var shared = 0
            var local = 0
            var damaged = 0
            var milliseconds = 0.0
        }

        /// What `--json` prints.
        struct Report: Encodable {
            var photos: Int
            var instances: [InstanceReport]
            var originRequests: Int
            var damagedBodies: Int
            var sharedEntries: Int
            var sharedBytes: Int
        }

        func run() async throws {
            let origin = try await GalleryOrigin.start(serving: gallery)
            let table =
                "demo_fleet_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("stash-fleet-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let coordinator = try await connect(table: String(table))
            say("Fleet demo: \(instances) instances, each with its own cache directory, one PostgreSQL shared tier")
            say(
                "(\(coordinator.endpoint), table \(table)); origin on \(origin.baseURL) with \(gallery.photos.count) photos."
            )
            say("")
            say("1. All \(instances) instances browse every photo, each in its own random order, at the same time.")
            var reports = try await withThrowingTaskGroup(of: InstanceReport.self) { group in
                for index in 1...instances {
                    group.addTask {
                        try await browse(
                            "instance \(index)", photos: gallery.photos, seed: UInt64(index), origin: origin,
                            table: String(table),
                            directory: root.appendingPathComponent("\(index)"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.instance < $1.instance }
            }
            let afterFirst = origin.served.requests
            say("2. A new instance starts with an empty cache and views 100 photos.")
            reports.append(
                try await browse(
                    "new instance", photos: Array(gallery.photos.prefix(100)), seed: 99, origin: origin,
                    table: String(table),
                    directory: root.appendingPathComponent("new")))
            let totals = try await coordinator.totals()
            let report = Report(
                photos: gallery.photos.count, instances: reports, originRequests: origin.served.requests,
                damagedBodies: reports.map(\.damaged).reduce(0, +), sharedEntries: totals.count,
                sharedBytes: totals.size)
            try await coordinator.removeAll()
            coordinator.shutdown()
            await origin.stop()
            if json {
                try Output.printJSON(report)
                return
            }
            say("")
            var rows = [["", "views", "from origin", "from PostgreSQL", "local hits", "damaged", "time"]]
            for instance in reports {
                rows.append([
                    instance.instance, "\(instance.views)", "\(instance.origin)", "\(instance.shared)",
                    "\(instance.local)",
                    "\(instance.damaged)", Output.duration(.milliseconds(Int(instance.milliseconds))),
                ])
            }
            for line in Output.table(rows) { say(line) }
            say("")
            say(
                "The origin served \(afterFirst) requests for \(gallery.photos.count) photos to \(instances) instances, "
                    + "and \(report.originRequests - afterFirst) to the new one; \(report.damagedBodies) damaged bodies."
            )
            say(
                "PostgreSQL held \(totals.count) entries, \(Output.size(totals.size)); the demo's table is now emptied."
            )
        }

        private func say(_ line: String) {
            if !json { Terminal.printLine(line) }
        }

        private func connect(table: String) async throws -> PostgresSharedTier {
            do {
                return try await PostgresSharedTier(url: url, configuration: .init(table: table))
            } catch {
                throw CLIError(error, while: "connecting to the shared tier")
            }
        }

        /// One instance: its own directory, its own connection pool, six loads at a time.
        private func browse(
            _ name: String, photos: [Gallery.Photo], seed: UInt64, origin: GalleryOrigin, table: String, directory: URL
        ) async throws -> InstanceReport {
            let tier = try await connect(table: table)
            defer { tier.shutdown() }
            var configuration = ResourceLoader.Configuration()
            configuration.sharedTier = tier
            let loader = ResourceLoader(
                cache: try DiskCache(directory: directory, sizeLimit: .gigabytes(1)), configuration: configuration)
            var generator = FleetOrder(seed: seed)
            let order = photos.shuffled(using: &generator)
            var report = InstanceReport(instance: name)
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: (Gallery.Photo, ResourceResponse).self) { group in
                var next = 0
                func add() {
                    guard next < order.count else { return }
                    let photo = order[next]
                    next += 1
                    group.addTask { (photo, try await loader.response(for: ResourceRequest(origin.url(of: photo)))) }
                }
                for _ in 0..<6 { add() }
                while let (photo, response) = try await group.next() {
                    report.views += 1
                    if response.data != gallery.body(of: photo, version: origin.version(of: photo)) {
                        report.damaged += 1
                    }
                    switch response.source {
                    case .network, .revalidated: report.origin += 1
                    case .shared: report.shared += 1
                    case .memory, .disk, .stale: report.local += 1
                    }
                    add()
                }
            }
            await loader.waitForSharedTierWrites()
            report.milliseconds =
                Double((ContinuousClock.now - start).components.attoseconds) / 1e15
                + Double((ContinuousClock.now - start).components.seconds) * 1000
            return report
        }
    }

    /// SplitMix64, so that each instance's order is the same on every run.
    struct FleetOrder: RandomNumberGenerator {
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

    extension DemoCommand {
        /// `stash demo --fleet N`.
        func runFleet(_ instances: Int, sharedURL: String?, photos: Int, json: Bool) async throws {
            guard (2...8).contains(instances) else {
                throw CLIError.usage("Invalid --fleet \(instances): give 2 to 8 instances.")
            }
            guard let url = sharedURL ?? ProcessInfo.processInfo.environment["STASH_POSTGRES_URL"] else {
                throw CLIError.usage(
                    "stash demo --fleet needs PostgreSQL: give --shared postgres://USER@127.0.0.1:PORT/DATABASE, or start "
                        + "a private server with 'scripts/postgres run -- swift run stash demo --fleet 3'.")
            }
            do {
                try await FleetDemo(url: url, instances: instances, gallery: Gallery(count: photos), json: json).run()
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError(error, while: "running the fleet demo")
            }
        }
    }
#endif
