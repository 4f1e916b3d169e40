#if Benchmarks
    import FlyingFox
    import FlyingSocks
    import Foundation

    /// Runs the loopback origin and the measured client processes, alternating the transports, and
    /// prints the medians side by side.
    struct Comparison {
        var rounds: Int
        var downloads: Int
        var concurrency: Int

        func run(json: Bool) async throws {
            let origin = try await Origin.start()
            defer { origin.stop() }
            var results: [ClientRun.Transport: [ClientRun.Result]] = [:]
            for round in 0..<rounds {
                let order = round % 2 == 0 ? ClientRun.Transport.allCases : ClientRun.Transport.allCases.reversed()
                for transport in order {
                    let result = try await measure(transport, origin: origin.url)
                    results[transport, default: []].append(result)
                    if json { print(result.jsonLine) }
                }
            }
            guard !json else { return }
            let megabytes = Double(Workload.sizes(count: downloads).reduce(0, +)) / 1_048_576
            print(
                "\n\(downloads) downloads of 20 KiB–2 MiB (\(String(format: "%.0f", megabytes)) MiB) from 127.0.0.1, "
                    + "\(concurrency) at a time, into a fresh DiskCache — median (min–max) of \(rounds) runs")
            print("| transport | time | throughput | peak RSS | RSS before the first download |")
            print("|---|---:|---:|---:|---:|")
            for transport in ClientRun.Transport.allCases {
                let runs = results[transport] ?? []
                let seconds = runs.map(\.seconds).sorted()
                let peaks = runs.map(\.peakRSSKiB).sorted()
                let baselines = runs.map(\.baselineRSSKiB).sorted()
                let median = seconds[seconds.count / 2]
                print(
                    "| \(transport.rawValue) | \(String(format: "%.2f s (%.2f–%.2f)", median, seconds.first!, seconds.last!)) | "
                        + "\(String(format: "%.0f MiB/s", megabytes / median)) | "
                        + "\(peaks[peaks.count / 2] / 1024) MiB (\(peaks.first! / 1024)–\(peaks.last! / 1024)) | "
                        + "\(baselines[baselines.count / 2] / 1024) MiB |")
            }
        }

        /// Runs one client process to completion off the cooperative pool (the origin serves on it).
        private func measure(_ transport: ClientRun.Transport, origin: String) async throws -> ClientRun.Result {
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let arguments = [
                "client", transport.rawValue, origin, "--downloads", "\(downloads)", "--concurrency", "\(concurrency)",
            ]
            let output: Data = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    do {
                        let process = Process()
                        let pipe = Pipe()
                        process.executableURL = executable
                        process.arguments = arguments
                        process.standardOutput = pipe
                        try process.run()
                        let data = pipe.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        guard process.terminationStatus == 0 else {
                            throw BenchmarkError(
                                "the \(transport.rawValue) run exited with \(process.terminationStatus)")
                        }
                        continuation.resume(returning: data)
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
            return try JSONDecoder().decode(ClientRun.Result.self, from: output)
        }
    }

    /// The loopback origin: `GET /body/INDEX/SIZE` answers ``Workload/body(index:size:)``.
    final class Origin {
        let url: String
        private let server: HTTPServer
        private let task: Task<Void, any Error>

        private init(url: String, server: HTTPServer, task: Task<Void, any Error>) {
            self.url = url
            self.server = server
            self.task = task
        }

        /// Starts listening on 127.0.0.1 (`.loopback` would listen on IPv6 only) on a free port.
        static func start() async throws -> Origin {
            let server = HTTPServer(
                address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 60, logger: .disabled, handler: Handler())
            let task = Task { try await server.run() }
            try await server.waitUntilListening()
            guard case .ip4(_, let port) = await server.listeningAddress else { throw BenchmarkError("no port") }
            return Origin(url: "http://127.0.0.1:\(port)", server: server, task: task)
        }

        func stop() { task.cancel() }

        private struct Handler: HTTPHandler {
            func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
                let parts = request.path.split(separator: "/")
                guard parts.count == 3, parts[0] == "body", let index = Int(parts[1]), let size = Int(parts[2]),
                    (0...Workload.largest).contains(size)
                else { return HTTPResponse(statusCode: .notFound) }
                return HTTPResponse(
                    statusCode: .ok, headers: [.contentType: "application/octet-stream"],
                    body: Workload.body(index: index, size: size))
            }
        }
    }
#endif
