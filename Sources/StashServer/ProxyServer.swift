#if Serve
    import Foundation
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Stash

    /// `stash serve`: a caching reverse proxy in front of one origin, with the shared-cache rules of
    /// RFC 9111.
    ///
    /// Every request is forwarded as a proxy must (hop-by-hop fields dropped, `Via` added, bodies
    /// streamed both ways); `GET` responses that a shared cache may store are kept in the memory tier,
    /// the disk tier (``Configuration/directory``) and the ``Configuration/sharedTier``, and served from
    /// there with their stored headers and a current `Age`. Concurrent misses of one URL make one origin
    /// request. Unsafe methods invalidate the URLs they change.
    ///
    /// ```swift
    /// let server = try ProxyServer(configuration: .init(origin: URL(string: "http://127.0.0.1:9000")!))
    /// try await server.start()
    /// await server.waitUntilStopped()
    /// ```
    public final class ProxyServer: Sendable {
        /// The configuration the server was created with.
        public let configuration: Configuration
        private let group: MultiThreadedEventLoopGroup
        /// Runs the disk tier's stores and the reads of exchanges, so that no event loop waits for
        /// the disk (the direct disk hits run on the ``DiskReader`` that ``start()`` makes).
        private let diskPool: NIOThreadPool
        private let state = LockedValue(RunState())
        private let stopped = LockedValue<[CheckedContinuation<Void, Never>]?>([])
        private let logger: Logger

        private struct RunState {
            var server: (any Channel)?
            var metricsServer: (any Channel)?
            var context: ProxyContext?
            var disk: DiskCache?
            var connections: [ObjectIdentifier: any Channel] = [:]
            var isStopping = false
            var logFlusher: RepeatedTask?
            var trimmer: RepeatedTask?
            var diskReader: ResponseStore.DiskHitReader?
        }

        /// Creates a server; ``start()`` opens the cache and starts listening.
        ///
        /// - Parameters:
        ///   - configuration: The origin, address, tiers and limits.
        ///   - logger: Where warnings (a tier that failed, a response that could not be stored) go.
        /// - Throws: `StashError` with `StashError.Code.invalidArgument` for an origin that is not an
        ///   absolute `http` URL with a host, or a limit out of range.
        public init(configuration: Configuration, logger: Logger = Logger(label: "stash.serve")) throws {
            let origin = configuration.origin
            guard let scheme = origin.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = origin.host, !host.isEmpty, origin.query == nil, origin.fragment == nil
            else {
                throw StashError(
                    .invalidArgument,
                    "The origin '\(origin.absoluteString)' is not an absolute http:// or https:// URL with a host (such as http://127.0.0.1:9000): pass the origin's base URL."
                )
            }
            guard (0...65_535).contains(configuration.port) else {
                throw StashError(
                    .invalidArgument, "The port \(configuration.port) is out of range: use 1-65535, or 0 for any.")
            }
            guard configuration.workers >= 1 else {
                throw StashError(
                    .invalidArgument, "The worker count \(configuration.workers) must be at least 1.")
            }
            self.configuration = configuration
            self.logger = logger
            self.group = MultiThreadedEventLoopGroup(numberOfThreads: configuration.workers)
            self.diskPool = NIOThreadPool(numberOfThreads: Self.diskThreads(workers: configuration.workers))
            // After the event loops have started, on purpose: see MemoryFootprint.limitArenas().
            MemoryFootprint.limitArenas()
        }

        /// Disk-tier threads: as many as event loops, at least two, so that one slow read (a page
        /// that is not resident) does not hold the others up, and at most 8.
        static func diskThreads(workers: Int) -> Int { min(8, max(2, workers)) }

        /// The port the server listens on, once started (the system's pick for port 0).
        public var port: Int? { state.withLock { $0.server?.localAddress?.port } }

        /// The port of the metrics endpoint, once started.
        public var metricsPort: Int? { state.withLock { $0.metricsServer?.localAddress?.port } }

        /// Opens the cache, checks that the origin answers, and starts listening.
        ///
        /// - Throws: `StashError`: `StashError.Code.transport` when the origin cannot be reached
        ///   (with ``Configuration/checksOrigin``), `StashError.Code.io` when the address cannot be
        ///   bound (a port in use), and what opening the disk tier or the access log throws.
        /// - Complexity: One connection to the origin, plus opening the disk tier.
        public func start() async throws {
            let configuration = configuration
            let options = try ServeOptions(configuration)
            if configuration.checksOrigin { try await checkOrigin() }
            let disk: DiskCache? = try configuration.directory.map {
                try DiskCache(directory: $0, configuration: DiskCache.Configuration(sizeLimit: configuration.sizeLimit))
            }
            let spool = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-serve-\(getpid())-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true)
            // Timeouts as the proxy has always had them: 10 s to connect, 60 s without a byte.
            let client = OriginClient(
                origin: configuration.origin, group: group, connectTimeout: .seconds(10), readTimeout: .seconds(60),
                idleTimeout: .seconds(60), maximumConnections: 256)
            diskPool.start()
            let diskReader = ResponseStore.makeDiskReader(
                threads: Self.diskThreads(workers: configuration.workers), loops: Array(group.makeIterator()))
            state.withLock { $0.diskReader = diskReader }
            let store = ResponseStore(
                origin: configuration.origin, memoryLimit: configuration.memoryLimit.bytes, disk: disk,
                shared: configuration.sharedTier, sharedItemLimit: configuration.sharedItemLimit.bytes,
                logger: logger, diskPool: diskPool, diskReader: diskReader,
                beforeDiskRead: configuration.beforeDiskRead, beforeDiskStore: configuration.beforeDiskStore)
            let accessLog = try configuration.accessLogPath.map { try AccessLog(path: $0) }
            let context = ProxyContext(
                origin: configuration.origin, store: store, client: client, metrics: ProxyMetrics(),
                accessLog: accessLog, logger: logger, originTimeout: .init(configuration.originTimeout),
                maximumStoredBody: configuration.maximumStoredBody.bytes, spoolDirectory: spool,
                options: options)
            let server: any Channel
            do {
                server = try await bind(context: context)
            } catch {
                await client.shutdown()
                disk?.close()
                throw error
            }
            var metricsServer: (any Channel)?
            if let metricsPort = configuration.metricsPort {
                do {
                    metricsServer = try await MetricsEndpoint.bind(
                        group: group, host: configuration.host, port: metricsPort, context: context)
                } catch {
                    try? await server.close()
                    await client.shutdown()
                    disk?.close()
                    throw Self.bindError(error, host: configuration.host, port: metricsPort, what: "metrics endpoint")
                }
            }
            diskReader.start()
            // Memory the memory tier released goes back to the system (see MemoryFootprint).
            let diskPool = diskPool
            let trimLoop = group.next()
            let trimmer = trimLoop.scheduleRepeatedTask(
                initialDelay: MemoryFootprint.trimInterval, delay: MemoryFootprint.trimInterval
            ) { _ in
                _ = diskPool.runIfActive(eventLoop: trimLoop) { MemoryFootprint.trim() }
            }
            state.withLock { $0.trimmer = trimmer }
            if let accessLog {
                // Lines reach the log within a second even when few requests arrive.
                let flusher = group.next().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
                    accessLog.flush()
                }
                state.withLock { $0.logFlusher = flusher }
            }
            state.withLock {
                $0.server = server
                $0.metricsServer = metricsServer
                $0.context = context
                $0.disk = disk
            }
        }

        private func bind(context: ProxyContext) async throws -> any Channel {
            let configuration = configuration
            let limits = ConnectionLimits(
                headerTimeout: .init(configuration.headerTimeout), idleTimeout: .init(configuration.idleTimeout))
            let decoderLimits = {
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderListSize = configuration.maximumHeaderSize
                limits.maxHeaderFieldSize = configuration.maximumHeaderSize
                return limits
            }()
            let bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.backlog, value: 1024)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
                .childChannelInitializer { [self] channel in
                    register(channel)
                    // Not NIO's HTTP server pipeline: the proxy encodes responses and orders pipelined
                    // requests itself, so that a memory hit can write its pre-encoded head (see
                    // ResponseEncoder).
                    return channel.eventLoop.makeCompletedFuture {
                        let activity = ConnectionActivity()
                        try channel.pipeline.syncOperations.addHandlers([
                            ActivityObserver(activity: activity),
                            VersionlessRequestGuard(),
                            ResponseEncoder(activity: activity),
                            ByteToMessageHandler(
                                HTTPRequestDecoder(
                                    leftOverBytesStrategy: .forwardBytes, limitConfiguration: decoderLimits)
                            ),
                            NIOHTTPResponseHeadersValidator(),
                            ProxyHandler(context: context, limits: limits, activity: activity),
                        ])
                    }
                }
            do {
                return try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
            } catch {
                throw Self.bindError(error, host: configuration.host, port: configuration.port, what: "proxy")
            }
        }

        private func register(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            let draining = state.withLock { state -> Bool in
                state.connections[id] = channel
                return state.isStopping
            }
            channel.closeFuture.whenComplete { [self] _ in
                _ = state.withLock { $0.connections.removeValue(forKey: id) }
            }
            if draining { channel.close(promise: nil) }
        }

        static func bindError(_ error: any Error, host: String, port: Int, what: String) -> StashError {
            if let error = error as? IOError, error.errnoCode == EADDRINUSE {
                return StashError(
                    .io,
                    "Cannot listen on \(host):\(port) for the \(what): the port is already in use. Stop the program using it, or pick another port.",
                    cause: error)
            }
            return StashError(.io, "Cannot listen on \(host):\(port) for the \(what): \(error).", cause: error)
        }

        /// Connects to the origin once, so that a wrong `--origin` fails at start-up, not on the first
        /// request.
        private func checkOrigin() async throws {
            let origin = configuration.origin
            let host = origin.host ?? ""
            let port = origin.port ?? (origin.scheme?.lowercased() == "https" ? 443 : 80)
            do {
                let channel = try await ClientBootstrap(group: group)
                    .connectTimeout(.seconds(5))
                    .connect(host: host, port: port).get()
                try await channel.close()
            } catch {
                throw StashError(
                    .transport,
                    "Cannot reach the origin \(origin.absoluteString) (\(host):\(port)): \(error). Start the origin first, or check --origin.",
                    cause: error)
            }
        }

        // MARK: - Stopping

        /// Stops accepting connections, lets the requests in flight finish (up to
        /// ``Configuration/shutdownTimeout``), closes the rest and releases everything.
        ///
        /// Idempotent; ``waitUntilStopped()`` returns once it is done.
        /// - Complexity: Waits for the slowest request in flight.
        public func shutdown() async {
            let (server, metrics, context, disk, connections, alreadyStopping) = state.withLock { state in
                defer { state.isStopping = true }
                return (
                    state.server, state.metricsServer, state.context, state.disk, Array(state.connections.values),
                    state.isStopping
                )
            }
            guard !alreadyStopping else {
                await waitUntilStopped()
                return
            }
            try? await server?.close()
            try? await metrics?.close()
            for connection in connections {
                connection.pipeline.fireUserInboundEventTriggered(ProxyHandler.Drain())
            }
            let loop = group.next()
            let everyClose = EventLoopFuture.andAllComplete(connections.map(\.closeFuture), on: loop)
            let forceClose = loop.scheduleTask(in: .init(configuration.shutdownTimeout)) {
                for connection in connections { connection.close(promise: nil) }
            }
            try? await everyClose.get()
            forceClose.cancel()
            state.withLock {
                $0.logFlusher?.cancel()
                $0.trimmer?.cancel()
            }
            if let context {
                await context.client.shutdown()
                context.accessLog?.flush()
                try? FileManager.default.removeItem(at: context.spoolDirectory)
            }
            await state.withLock({ $0.diskReader })?.shutdown()
            try? await diskPool.shutdownGracefully()
            disk?.close()
            try? await group.shutdownGracefully()
            let waiters = stopped.withLock { waiters -> [CheckedContinuation<Void, Never>] in
                defer { waiters = nil }
                return waiters ?? []
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Returns once ``shutdown()`` has finished.
        public func waitUntilStopped() async {
            await withCheckedContinuation { continuation in
                let queued = stopped.withLock { waiters -> Bool in
                    guard waiters != nil else { return false }
                    waiters!.append(continuation)
                    return true
                }
                if !queued { continuation.resume() }
            }
        }
    }
#endif
