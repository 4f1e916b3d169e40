#if Serve
    import ArgumentParser
    import Dispatch
    import Foundation
    import Logging
    import Stash
    import StashServer

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `stash serve --origin URL --listen HOST:PORT`: a caching reverse proxy in front of one origin.
    struct ServeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Run a caching reverse proxy (a shared HTTP cache, RFC 9111) in front of an origin.",
            discussion: """
                Forwards every request to --origin and keeps the responses a shared cache may store in \
                memory, in --dir on disk, and in the --shared PostgreSQL tier, serving them from there while \
                fresh. Prints "listening on HOST:PORT" once it accepts connections. SIGTERM or SIGINT stops \
                it gracefully: requests in flight finish, then it exits 0.
                """
        )

        @Option(help: ArgumentHelp("The origin to forward to, such as http://127.0.0.1:9000.", valueName: "url"))
        var origin: String

        @Option(help: ArgumentHelp("The address to listen on (default: 127.0.0.1:8080).", valueName: "host:port"))
        var listen = "127.0.0.1:8080"

        @Option(
            name: .customLong("dir"),
            help: ArgumentHelp("The disk tier's directory (default: memory only).", valueName: "path"))
        var directoryPath: String?

        @Option(
            name: .customLong("size-limit"),
            help: ArgumentHelp("The disk tier's byte limit, such as 500MB or 2GiB (default: 1GB).", valueName: "size"))
        var sizeLimitText: String?

        @Option(
            name: .customLong("memory-limit"),
            help: ArgumentHelp(
                "The memory tier's byte limit (default: 256MiB): what its responses hold (bodies, heads, about 1 KiB of objects each), a sixteenth of it for the decoded heads of disk-tier entries. Beyond it the process needs a fixed overhead (runtime, SQLite's page caches, the disk tier's staging area and frequency sketch, up to 262,144 URLs known to have no Vary marker, one per KiB of the limit at about 64 bytes each, bodies in flight (up to 8 MiB of them waiting for their disk store after their response ended), up to 4 MiB kept for bodies above 128 KiB), meant to stay within 64 MiB whatever the number of URLs.",
                valueName: "size"))
        var memoryLimitText: String?

        @OptionGroup var shared: SharedTierOption

        @Option(help: "Event-loop threads (default: one per core).")
        var workers: Int?

        @Option(
            name: .customLong("metrics"),
            help: ArgumentHelp(
                "Serve Prometheus metrics at /metrics on this address (a port or host:port).", valueName: "address"))
        var metricsAddress: String?

        @Option(
            name: .customLong("access-log"),
            help: ArgumentHelp(
                "Write the access log (common format + cache status) to this file, or - for standard output.",
                valueName: "path"))
        var accessLog: String?

        @Option(help: "Seconds a request head may take before a 408 (default: 10).")
        var headerTimeout: Double = 10

        @Option(help: "Seconds a keep-alive connection may stay idle (default: 60).")
        var idleTimeout: Double = 60

        @Option(help: "The most bytes of request header fields before a 431 (default: 16384).")
        var maxHeaderSize: Int = 16_384

        @Option(
            name: .customLong("alias"),
            help: ArgumentHelp(
                "Another name of the origin that an absolute-form target (GET http://NAME/path) may use, as host or host:port (repeatable).",
                valueName: "host"))
        var aliases: [String] = []

        @Option(
            name: .customLong("trust-forwarded"),
            help: ArgumentHelp(
                "Keep the Forwarded and X-Forwarded-* fields of peers in this IP range, appending the client's address (repeatable; default: replace them from everyone).",
                valueName: "cidr"))
        var trustedForwarders: [String] = []

        @Option(
            name: .customLong("purge-allow"),
            help: ArgumentHelp(
                "Accept PURGE on the proxy's own address from peers in this IP range (repeatable; the --metrics address accepts it from anyone).",
                valueName: "cidr"))
        var purgeAllowList: [String] = []

        @Option(
            name: .customLong("range-fetch-limit"),
            help: ArgumentHelp(
                "A Range miss fetches and stores the whole response up to this size; above it the range is passed through (default: 256MiB).",
                valueName: "size"))
        var rangeFetchLimitText: String?

        @Flag(
            name: .customLong("exit-with-parent"),
            help: ArgumentHelp(
                "Shut down, as on SIGTERM, once the process that started stash serve has exited (checked twice a second): for a proxy that a test harness or a development tool starts, which must not outlive it."
            ))
        var exitWithParent = false

        func run() async throws {
            guard let originURL = URL(string: origin), originURL.scheme != nil, originURL.host != nil else {
                throw CLIError.usage(
                    "The origin '\(origin)' is not an absolute URL such as http://127.0.0.1:9000: check --origin.")
            }
            var configuration = ProxyServer.Configuration(origin: originURL)
            (configuration.host, configuration.port) = try Self.address(listen, option: "--listen")
            configuration.directory = directoryPath.map { URL(fileURLWithPath: $0, isDirectory: true) }
            if let size = try CacheOptions.parseSize(sizeLimitText, option: "--size-limit") {
                configuration.sizeLimit = size
            }
            if let size = try CacheOptions.parseSize(memoryLimitText, option: "--memory-limit") {
                configuration.memoryLimit = size
            }
            if let workers {
                guard workers >= 1 else { throw CLIError.usage("--workers must be at least 1; it is \(workers).") }
                configuration.workers = workers
            }
            if let metricsAddress {
                let host: String
                let port: Int
                if let number = Int(metricsAddress) {
                    (host, port) = (configuration.host, number)
                } else {
                    (host, port) = try Self.address(metricsAddress, option: "--metrics")
                }
                guard host == configuration.host else {
                    throw CLIError.usage("--metrics must listen on the same host as --listen (\(configuration.host)).")
                }
                configuration.metricsPort = port
            }
            configuration.accessLogPath = accessLog
            configuration.headerTimeout = .milliseconds(Int(headerTimeout * 1000))
            configuration.idleTimeout = .milliseconds(Int(idleTimeout * 1000))
            configuration.maximumHeaderSize = maxHeaderSize
            configuration.hostAliases = aliases
            configuration.trustedForwarders = trustedForwarders
            configuration.purgeAllowList = purgeAllowList
            if let size = try CacheOptions.parseSize(rangeFetchLimitText, option: "--range-fetch-limit") {
                configuration.rangeFetchLimit = size
            }
            let tier = try await shared.connect()
            configuration.sharedTier = tier
            var logger = Logger(label: "stash.serve")
            logger.logLevel = .warning

            let server: ProxyServer
            do {
                server = try ProxyServer(configuration: configuration, logger: logger)
                try await server.start()
            } catch let error as StashError where error.code == .invalidArgument {
                throw CLIError.usage(error.message)
            } catch {
                throw CLIError(error, while: "starting the proxy")
            }
            let signals = Self.onTermination { Task { await server.shutdown() } }
            let parentWatch = exitWithParent ? Self.onParentExit { Task { await server.shutdown() } } : nil
            var line = "listening on \(configuration.host):\(server.port ?? configuration.port)"
            if let metricsPort = server.metricsPort { line += ", metrics on \(configuration.host):\(metricsPort)" }
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            await server.waitUntilStopped()
            for source in signals { source.cancel() }
            parentWatch?.cancel()
        }

        /// Parses `HOST:PORT` (or `[V6]:PORT`).
        static func address(_ text: String, option: String) throws -> (String, Int) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (0...65_535).contains(port)
            else {
                throw CLIError.usage("\(option) '\(text)' is not HOST:PORT, such as 127.0.0.1:8080.")
            }
            var host = String(text[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            return (host.isEmpty ? "127.0.0.1" : host, port)
        }

        /// Runs `action` once the parent process has exited.
        ///
        /// The process is then a child of another (init, or a subreaper), so its parent's
        /// identifier changes. Polled: no signal tells a process that its parent exited on every
        /// platform (Linux's `PR_SET_PDEATHSIG` follows the thread that started it, not the process).
        static func onParentExit(_ action: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
            let parent = getppid()
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
            // The handler holds the timer until it is cancelled, here or by the caller: a source's
            // handler never runs twice at once, and not after the cancel.
            timer.setEventHandler {
                guard getppid() != parent else { return }
                timer.cancel()
                action()
            }
            timer.resume()
            return timer
        }

        /// Runs `action` on SIGTERM or SIGINT instead of dying.
        static func onTermination(_ action: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
            [SIGTERM, SIGINT].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler(handler: action)
                source.resume()
                return source
            }
        }
    }
#endif
