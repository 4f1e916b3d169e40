#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash demo`: the cache at work against an origin server inside the process, no internet needed.
    struct DemoCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Watch the cache at work: a photo gallery served from 127.0.0.1, cached within 10 MB.",
            discussion: """
                Starts an origin server on 127.0.0.1 inside this process serving a gallery of generated photos \
                (20 KiB to 2 MiB, with ETags), then: 1. browses it through a cache limited to 10 MB (downloads, \
                evictions); 2. revisits the photos viewed last (served with no request); 3. relaunches over the \
                same directory (still served from disk); 4. changes some photos on the origin and revisits with \
                HTTP revalidation (304 for the unchanged, 200 for exactly the changed); 5. sums up requests, \
                bytes, hit ratios and latencies. The server is stopped and, without --dir, the temporary \
                directory removed at the end.
                """
        )

        @Option(
            name: .customLong("dir"),
            help: ArgumentHelp(
                "Keep the demo's cache in this directory (new or empty) instead of a temporary one, to inspect it afterwards with 'stash ls --dir'.",
                valueName: "path"))
        var directoryPath: String?

        @Option(
            name: .customLong("size-limit"),
            help: ArgumentHelp("The cache's size limit, at least 5MB (default: 10MB).", valueName: "size"))
        var sizeLimitText: String?

        @Option(help: ArgumentHelp("Photos in the gallery, 50 to 2000 (default: 300).", valueName: "n"))
        var photos = 300

        @Option(help: ArgumentHelp("Photos the origin changes before step 4 (default: 5).", valueName: "n"))
        var changes = 5

        @Flag(name: .customLong("json"), help: "Print the report as one JSON document at the end instead of text.")
        var json = false

        @Option(
            help: ArgumentHelp(
                "Instead: N servers (2 to 8) with their own cache directories behind one PostgreSQL shared tier (--shared, else $STASH_POSTGRES_URL).",
                valueName: "n"))
        var fleet: Int?

        @OptionGroup var shared: SharedTierOption

        func validate() throws {
            if let limit = try CacheOptions.parseSize(sizeLimitText, option: "--size-limit"), limit < .megabytes(5) {
                throw ValidationError(
                    "The demo needs --size-limit of at least 5MB, so that its largest photos (2 MiB) fit; got '\(sizeLimitText ?? "")'."
                )
            }
            guard (50...2000).contains(photos) else {
                throw ValidationError("Invalid --photos \(photos): give 50 to 2000 photos.")
            }
            if !shared.settingsGiven.isEmpty {
                throw ValidationError(
                    "The demo uses a table of its own with the default limits: drop --shared-table, --shared-size-limit and --shared-timeout."
                )
            }
            guard (1...30).contains(changes) else {
                throw ValidationError("Invalid --changes \(changes): give 1 to 30 photos.")
            }
        }

        func run() async throws {
            if let fleet { return try await runFleet(fleet, sharedURL: shared.url, photos: photos, json: json) }
            let sizeLimit = try CacheOptions.parseSize(sizeLimitText, option: "--size-limit") ?? .megabytes(10)
            let directory = try prepareDirectory()
            let isTemporary = directoryPath == nil
            defer {
                // A leftover temporary directory is only clutter in the system's temporary folder.
                if isTemporary { try? FileManager.default.removeItem(at: directory) }
            }
            let story = DemoStory(
                gallery: Gallery(count: photos), directory: directory, isTemporary: isTemporary, sizeLimit: sizeLimit,
                changes: changes, printsText: !json)
            // Ctrl-C cancels the story, which stops the origin, so that the temporary cache is removed.
            let task = Task { try await story.run() }
            signal(SIGINT, SIG_IGN)
            let interruption = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            interruption.setEventHandler { task.cancel() }
            interruption.resume()
            defer {
                interruption.cancel()
                signal(SIGINT, SIG_DFL)
            }
            let report: DemoReport
            do {
                report = try await task.value
            } catch {
                if task.isCancelled {
                    throw CLIError(status: 130, "Interrupted: the demo's origin server is stopped.")
                }
                throw CLIError(error, while: "running the demo")
            }
            if json {
                try Output.printJSON(report)
                return
            }
            Terminal.printLine()
            let ending =
                isTemporary
                ? "the origin server is stopped and the temporary cache removed."
                : "the origin server is stopped; inspect the cache with 'stash ls --dir \(directory.path)'."
            Terminal.printLine("Finished in \(Output.duration(.seconds(report.seconds))); \(ending)")
        }

        /// A new temporary directory, or `--dir` when it is new or empty.
        private func prepareDirectory() throws -> URL {
            guard let directoryPath else {
                return FileManager.default.temporaryDirectory.appendingPathComponent(
                    "stash-demo-\(UUID().uuidString)", isDirectory: true)
            }
            let directory = URL(fileURLWithPath: directoryPath, isDirectory: true).standardizedFileURL
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            guard contents.isEmpty else {
                throw CLIError.usage(
                    "\(directory.path) is not empty: give 'stash demo --dir' a new or empty directory, so that the demo starts from an empty cache."
                )
            }
            return directory
        }
    }
#endif
