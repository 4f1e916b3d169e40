#if Tool
    import ArgumentParser
    import Foundation
    import Stash
    import StashHTTP

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// `stash fetch URL… [--policy …] [-o FILE]`: loads URLs through the cache.
    struct FetchCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fetch",
            abstract: "Load URLs through the cache: downloaded once, then served from disk.",
            discussion: """
                Prints for each URL whether it was a memory or disk hit, a revalidation or a download, its \
                size, the time taken and the cached file. A progress bar shows long transfers on a terminal. \
                A failed URL prints one line on standard error and the others go on; the exit status is then \
                74 (or 1 for a miss under --policy cache-only). Under --policy http, when the origin cannot be \
                reached or answers 5xx, a cached copy up to --max-stale seconds past its freshness is served \
                instead, with "served stale (origin unreachable: …)" on standard error and exit status 0; \
                --no-stale refuses that. An interrupted download (the command killed, the connection lost) is \
                resumed with a Range request by the next fetch of the URL.
                """
        )

        /// How `fetch` uses the cache.
        enum Policy: String, ExpressibleByArgument, CaseIterable {
            /// A cached URL is served with no request.
            case cacheFirst = "cache-first"
            /// HTTP caching: fresh entries are served, stale ones revalidated with their ETag.
            case http
            /// Always download again, replacing the entry.
            case reload
            /// Never touch the network: a miss fails.
            case cacheOnly = "cache-only"

            var loaderPolicy: ResourceLoader.CachePolicy {
                switch self {
                case .cacheFirst: .cacheFirst
                case .http: .http
                case .reload: .reload
                case .cacheOnly: .cacheOnly
                }
            }
        }

        @Argument(help: ArgumentHelp("The http or https URLs to load.", valueName: "url"))
        var urls: [String] = []

        @Option(
            help: "cache-first (the default), http (honour Cache-Control, revalidate with ETags), reload or cache-only."
        )
        var policy: Policy = .cacheFirst

        @Option(
            name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp(
                "Also write the body to this file, or - for standard output (the report then goes to standard error); one URL only. A device, FIFO or socket is written in place, a link written through, a regular file replaced atomically.",
                valueName: "file"))
        var output: String?

        @Option(
            name: .customLong("max-stale"),
            help: ArgumentHelp(
                "Under --policy http, serve a cached copy up to this many seconds past its freshness when the origin fails (default: one day; a response's stale-if-error may allow longer).",
                valueName: "seconds"))
        var maxStale: Int = 86_400

        @Flag(name: .customLong("no-stale"), help: "Never serve a stale copy: fail when the origin fails.")
        var noStale = false

        @OptionGroup var options: CacheOptions
        @OptionGroup var shared: SharedTierOption

        @OptionGroup var transportOptions: TransportOptions

        /// One URL's outcome, in `--json` output.
        struct Result: Encodable {
            var url: String
            var key: String?
            var outcome: String
            var size: Int?
            var milliseconds: Double
            var file: String?
            var etag: String?
            var error: String?
            /// Why a stale copy was served, for the outcome `stale`.
            var staleReason: String?
        }

        /// What `--json` prints.
        struct Report: Encodable {
            var results: [Result]
        }

        func validate() throws {
            if urls.isEmpty {
                throw ValidationError(
                    "Name at least one URL to fetch, such as 'stash fetch https://example.com/a.jpg'.")
            }
            if output != nil && urls.count > 1 {
                throw ValidationError("-o writes one body: give one URL with it, or fetch the URLs without -o.")
            }
            if output == "-" && options.json {
                throw ValidationError(
                    "--json and -o - would both write to standard output: give -o a file, or drop one of them.")
            }
            for text in urls { _ = try Self.parse(text) }
            if maxStale < 0 {
                throw ValidationError(
                    "--max-stale must be 0 or more seconds, got \(maxStale); use --no-stale to refuse stale copies.")
            }
        }

        static func parse(_ text: String) throws -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme),
                url.host?.isEmpty == false
            else {
                throw ValidationError(
                    "'\(text)' is not an http or https URL: write it in full, such as https://example.com/a.jpg.")
            }
            return url
        }

        func run() async throws {
            let sharedTier = try await shared.connect()
            defer { sharedTier?.shutdown() }
            // An output that cannot be written is reported before anything is downloaded.
            let destination = try output.map { try OutputFile(path: $0, for: "the body of \(urls[0])") }
            try await options.withSession { session in
                var configuration = ResourceLoader.Configuration(cachePolicy: policy.loaderPolicy)
                configuration.maximumStaleness = noStale ? nil : .seconds(maxStale)
                SharedTierOption.apply(sharedTier, to: &configuration)
                let loader = ResourceLoader(
                    cache: session.cache, transport: transportOptions.transport.make(), configuration: configuration)
                var results: [Result] = []
                var failure: CLIError?
                for text in urls {
                    let url = try Self.parse(text)
                    let result = await fetch(url, loader: loader, session: session, destination: destination)
                    if let error = result.error {
                        failure = failure ?? error
                        Terminal.printError(error.message)
                    }
                    results.append(result.result)
                    if !options.json, result.error == nil { report(result.result) }
                    if let reason = result.result.staleReason { Terminal.printError("served stale (\(reason))") }
                }
                // A stale-while-revalidate serve revalidates in the background: finish it before exiting.
                await loader.waitForBackgroundRevalidations()
                if options.json { try Output.printJSON(Report(results: results)) }
                if let failure { throw CLIError(status: failure.status, "") }
            }
        }

        private func fetch(
            _ url: URL, loader: ResourceLoader, session: CacheSession, destination: OutputFile?
        ) async -> (
            result: Result, error: CLIError?
        ) {
            let start = ContinuousClock.now
            let task = loader.task(for: ResourceRequest(url, cachePolicy: policy.loaderPolicy), delivery: .file)
            let bar = ProgressBar(label: url.absoluteString)
            for await progress in task.progress { bar.update(progress) }
            bar.finish()
            do {
                let response = try await task.response
                let elapsed = ContinuousClock.now - start
                guard let file = response.fileURL else { preconditionFailure("a .file delivery delivered data") }
                let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
                let outcome = record(response.source, size: size, in: session)
                if let destination {
                    do {
                        // An empty body is not read: on Linux, Data(contentsOf:) leaks a 4 KiB buffer for it.
                        try destination.write(size == 0 ? Data() : try Data(contentsOf: file, options: .alwaysMapped))
                    } catch let error as CLIError {
                        throw error
                    } catch {
                        throw CLIError.io(
                            "Cannot read the cached body of \(url.absoluteString) at \(file.path) (\(error.localizedDescription)): run 'stash verify'."
                        )
                    }
                }
                return (
                    Result(
                        url: url.absoluteString, key: response.cacheKey, outcome: outcome, size: size,
                        milliseconds: Output.roundedMilliseconds(elapsed), file: file.path,
                        etag: response.metadata.etag,
                        staleReason: response.source == .stale ? Self.staleReason(response.originFailure) : nil),
                    nil
                )
            } catch {
                session.record { $0.fetchFailures += 1 }
                var cliError = CLIError(error, while: "fetching \(url.absoluteString)")
                if policy == .cacheOnly, (error as? StashError)?.code == .notFound {
                    cliError = .miss(
                        "\(url.absoluteString) is not in the cache, and --policy cache-only never downloads: fetch it once without it."
                    )
                }
                return (
                    Result(
                        url: url.absoluteString, outcome: "failed",
                        milliseconds: Output.roundedMilliseconds(ContinuousClock.now - start), error: cliError.message),
                    cliError
                )
            }
        }

        /// Why a stale copy was served, in a few words.
        static func staleReason(_ failure: StashError?) -> String {
            guard let failure else { return "revalidating in the background" }
            if let status = failure.cause as? HTTPStatusError {
                let phrase = HTTPURLResponse.localizedString(forStatusCode: status.statusCode).capitalized
                return "origin unreachable: it answered \(status.statusCode) \(phrase)"
            }
            let detail = failure.cause.map { ($0 as NSError).localizedDescription } ?? failure.message
            return "origin unreachable: \(detail)"
        }

        /// Counts the outcome in the session's statistics and names it.
        private func record(_ source: ResourceResponse.Source, size: Int, in session: CacheSession) -> String {
            switch source {
            case .memory:
                session.record {
                    $0.memoryHits += 1
                    $0.bytesServed += size
                }
                return "memory-hit"
            case .disk:
                session.record {
                    $0.diskHits += 1
                    $0.bytesServed += size
                }
                return "disk-hit"
            case .stale:
                // Served from disk: counted with the disk hits.
                session.record {
                    $0.diskHits += 1
                    $0.bytesServed += size
                }
                return "stale"
            case .revalidated:
                session.record {
                    $0.revalidated += 1
                    $0.bytesServed += size
                }
                return "revalidated"
            case .shared:
                session.record { $0.bytesServed += size }
                return "shared-hit"
            case .network:
                session.record {
                    $0.downloads += 1
                    $0.bytesDownloaded += size
                }
                return "downloaded"
            }
        }

        /// Prints one URL's outcome: on standard output, or standard error when the body went there.
        private func report(_ result: Result) {
            let outcome =
                switch result.outcome {
                case "memory-hit": "memory hit"
                case "disk-hit": "disk hit"
                default: result.outcome
                }
            var lines = [
                "\(result.url): \(outcome), \(Output.size(result.size ?? 0)) in \(Output.duration(.milliseconds(result.milliseconds)))",
                "  cached at \(result.file ?? "")",
            ]
            if let output, output != "-" { lines.append("  written to \(output)") }
            let text = lines.joined(separator: "\n") + "\n"
            if output == "-" { Terminal.printToStandardError(text) } else { Terminal.printText(text) }
        }
    }
#endif
