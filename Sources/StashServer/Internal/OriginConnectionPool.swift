#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Stash

    /// Keep-alive connections to one plain-`http` origin: at most ``maximumConnections`` open, a
    /// connection reused only after a complete response that did not ask to close it, an idle one
    /// closed after ``idleTimeout``, and a request that finds every connection busy waiting for
    /// one (until its deadline).
    final class OriginConnectionPool: Sendable {
        let host: String
        let port: Int
        let connectTimeout: TimeAmount
        let readTimeout: TimeAmount
        let idleTimeout: TimeAmount
        let maximumConnections: Int
        private let group: any EventLoopGroup
        private let state = LockedValue(State())

        private struct Idle {
            let connection: OriginConnection
            let timer: Scheduled<Void>
        }

        private struct Waiter {
            let id: Int
            /// Called with a connection to reuse, or `nil`: a slot to open one in.
            let resume: @Sendable (Result<OriginConnection?, any Error>) -> Void
        }

        private struct State {
            var idle: [Idle] = []
            var open = 0
            var all: [ObjectIdentifier: OriginConnection] = [:]
            var waiters: [Waiter] = []
            var nextWaiter = 0
            var isShutDown = false
        }

        init(
            group: any EventLoopGroup, host: String, port: Int, connectTimeout: TimeAmount, readTimeout: TimeAmount,
            idleTimeout: TimeAmount, maximumConnections: Int
        ) {
            self.group = group
            self.host = host
            self.port = port
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.idleTimeout = idleTimeout
            self.maximumConnections = maximumConnections
        }

        /// A connection for one request: an idle one, a new one, or the next one freed.
        ///
        /// - Parameter fresh: Opens a new connection even when the pool is full or has idle ones
        ///   (for the one retry of a request whose reused connection closed, see
        ///   ``OriginClient/execute(_:deadline:interim:)``: the connection that failed is closing
        ///   and frees its place).
        /// - Returns: The connection, and whether it served a request before.
        func lease(deadline: NIODeadline, fresh: Bool = false) async throws -> (OriginConnection, reused: Bool) {
            try await withCheckedThrowingContinuation { continuation in
                lease(deadline: deadline, fresh: fresh, preferring: nil) { continuation.resume(with: $0) }
            }
        }

        /// ``lease(deadline:fresh:)`` with a callback: `completion` runs once, on any thread, with
        /// the connection and whether it served a request before.
        ///
        /// - Parameter loop: The event loop the caller runs on: an idle connection of that loop is
        ///   taken first, and a new one is opened on it, so that the answer's parts reach the caller
        ///   without a trip between threads.
        func lease(
            deadline: NIODeadline, fresh: Bool = false, preferring loop: (any EventLoop)?,
            completion: @escaping @Sendable (Result<(OriginConnection, reused: Bool), any Error>) -> Void
        ) {
            enum Step {
                case reuse(OriginConnection)
                case open
                case wait(Int)
                case shutDown
            }
            let step = state.withLock { state -> Step in
                if state.isShutDown { return .shutDown }
                if fresh {
                    state.open += 1
                    return .open
                }
                if let loop,
                    let index = state.idle.lastIndex(where: {
                        $0.connection.channel.eventLoop === loop && $0.connection.channel.isActive
                    })
                {
                    let idle = state.idle.remove(at: index)
                    idle.timer.cancel()
                    return .reuse(idle.connection)
                }
                while let idle = state.idle.popLast() {
                    idle.timer.cancel()
                    if idle.connection.channel.isActive { return .reuse(idle.connection) }
                }
                if state.open < maximumConnections {
                    state.open += 1
                    return .open
                }
                state.nextWaiter += 1
                let id = state.nextWaiter
                state.waiters.append(
                    Waiter(id: id) { [self] result in
                        switch result {
                        case .success(let connection?): completion(.success((connection, true)))
                        case .success(nil): open(on: loop, completion: completion)
                        case .failure(let error): completion(.failure(error))
                        }
                    })
                return .wait(id)
            }
            switch step {
            case .reuse(let connection): completion(.success((connection, true)))
            case .open: open(on: loop, completion: completion)
            case .shutDown: completion(.failure(OriginClientError.shutDown))
            case .wait(let waiterID):
                (loop ?? group.next()).scheduleTask(deadline: deadline) { [self] in
                    let waiter = state.withLock { state -> Waiter? in
                        guard let index = state.waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                        return state.waiters.remove(at: index)
                    }
                    waiter?.resume(.failure(OriginClientError.deadlineExceeded))
                }
            }
        }

        /// Opens a connection in a slot already counted in ``State/open``; frees the slot if it fails.
        private func open(
            on loop: (any EventLoop)?,
            completion: @escaping @Sendable (Result<(OriginConnection, reused: Bool), any Error>) -> Void
        ) {
            connect(on: loop).whenComplete { [self] result in
                switch result {
                case .success(let connection): completion(.success((connection, false)))
                case .failure(let error):
                    freeSlot()
                    completion(.failure(error))
                }
            }
        }

        /// How much one read from the origin takes: 64 KiB, the most a loopback segment carries
        /// and below the mmap threshold (see ``MemoryFootprint``).
        ///
        /// NIO's default starts a connection at 2 KiB and doubles it only after a read that filled
        /// it, halving it again after two short ones: on a mix of small and large responses a body
        /// then comes in many small chunks, and each costs the exchange a trip through the parts'
        /// sequence, a write to the client and an append to the spool.
        static let receiveBuffers = FixedSizeRecvByteBufferAllocator(capacity: 64 * 1024)

        private func connect(on loop: (any EventLoop)?) -> EventLoopFuture<OriginConnection> {
            let readTimeout = readTimeout
            return ClientBootstrap(group: loop ?? group.next())
                .connectTimeout(connectTimeout)
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandlers([
                            HTTPRequestEncoder(),
                            ByteToMessageHandler(
                                HTTPResponseDecoder(
                                    leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)),
                            NIOHTTPRequestHeadersValidator(),
                            OriginConnectionHandler(readTimeout: readTimeout),
                        ])
                    }
                }
                .connect(host: host, port: port)
                .flatMapThrowing { [self] channel in try self.admit(channel) }
        }

        /// Makes a connection of a channel just opened (on its event loop) and counts it, unless
        /// the pool shut down meanwhile.
        private func admit(_ channel: any Channel) throws -> OriginConnection {
            let connection = try {
                let handler = try channel.pipeline.syncOperations.handler(type: OriginConnectionHandler.self)
                let connection = OriginConnection(
                    channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
                // Weak: the connection holds its handler, and the pool (or a request) holds the
                // connection for as long as it is open; a strong capture here would keep the
                // connection, its channel and its event loop alive after close (LeakSanitizer).
                handler.onReusable = { [weak self, weak connection] idle in
                    guard let connection else { return }
                    self?.release(connection, idle: idle)
                }
                return connection
            }()
            let admitted = state.withLock { state -> Bool in
                guard !state.isShutDown else { return false }
                state.all[ObjectIdentifier(connection)] = connection
                return true
            }
            guard admitted else {
                channel.close(promise: nil)
                throw OriginClientError.shutDown
            }
            channel.closeFuture.whenComplete { [weak self, connection] _ in self?.closed(connection) }
            return connection
        }

        /// A connection whose response is complete: to the first waiter, or idle for at most
        /// ``idleTimeout`` (or `originIdle`, when the origin keeps it open for less).
        private func release(_ connection: OriginConnection, idle originIdle: TimeAmount?) {
            let idle = originIdle.map { min($0, idleTimeout) } ?? idleTimeout
            let timer = connection.channel.eventLoop.scheduleTask(in: idle) { [weak self, connection] in
                guard let self else { return }
                self.expire(connection)
            }
            let waiter = state.withLock { state -> Waiter? in
                guard !state.isShutDown else { return nil }
                if !state.waiters.isEmpty { return state.waiters.removeFirst() }
                state.idle.append(Idle(connection: connection, timer: timer))
                return nil
            }
            if let waiter {
                timer.cancel()
                waiter.resume(.success(connection))
            }
        }

        /// Closes `connection` if it is still idle (a lease may have taken it as its timer fired).
        private func expire(_ connection: OriginConnection) {
            let id = ObjectIdentifier(connection)
            let wasIdle = state.withLock { state -> Bool in
                guard let index = state.idle.firstIndex(where: { ObjectIdentifier($0.connection) == id }) else {
                    return false
                }
                state.idle.remove(at: index)
                return true
            }
            if wasIdle { connection.channel.close(promise: nil) }
        }

        private func closed(_ connection: OriginConnection) {
            let id = ObjectIdentifier(connection)
            let counted = state.withLock { state -> Bool in
                state.idle.removeAll { ObjectIdentifier($0.connection) == id }
                return state.all.removeValue(forKey: id) != nil
            }
            if counted { freeSlot() }
        }

        /// One connection fewer: a waiter, if any, may open one.
        private func freeSlot() {
            let waiter = state.withLock { state -> Waiter? in
                guard !state.waiters.isEmpty, !state.isShutDown else {
                    state.open -= 1
                    return nil
                }
                return state.waiters.removeFirst()
            }
            waiter?.resume(.success(nil))
        }

        /// Fails the waiting requests and closes every connection.
        func shutdown() async {
            let (connections, waiters) = state.withLock { state in
                state.isShutDown = true
                defer {
                    state.waiters = []
                    state.idle = []
                }
                return (Array(state.all.values), state.waiters)
            }
            for waiter in waiters { waiter.resume(.failure(OriginClientError.shutDown)) }
            for connection in connections {
                try? await connection.channel.close()
            }
        }
    }
#endif
