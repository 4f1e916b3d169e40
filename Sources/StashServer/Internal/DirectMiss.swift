#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// A plain cacheable miss run from NIO callbacks, without a task: a `GET` without `Range` or
    /// content that the disk tier does not have, whose fill this request leads, to a plain-`http`
    /// origin. It does what an ``Exchange`` does for it (``Exchange/forward(stored:base:partialBase:)``
    /// and ``Exchange/relay(_:stored:base:partialBase:)``), with the same observable behaviour:
    ///
    /// * the origin connection's parts come by callback (``OriginPartSink``), on the connection's
    ///   event loop, which the pool picks to be the client's when it can
    ///   (``OriginConnectionPool/lease(deadline:fresh:preferring:completion:)``): a part goes to the
    ///   client's channel and to the ``BodySpool`` with no trip between threads;
    /// * the head waits for the first chunk (a body that comes whole goes out with its head and end
    ///   in one write); the last chunk is held back until the response is stored in the memory
    ///   tier, and goes before the disk tier's store of it ends, which runs on a disk thread (a
    ///   body below the disk tier's inline threshold is staged for its writer on this loop, which
    ///   waits for no disk: ``ResponseStore/storeMiss(_:key:bodyFile:on:)``); the
    ///   fill ends with that store, so that a request that follows finds the response (it waits for
    ///   the fill when the memory tier did not keep it). While the bodies that wait for their disk
    ///   store so hold 8 MiB, and for a body spooled to a file, the last chunk waits for the store;
    /// * back-pressure: while the client's channel is not writable, the origin is not read until the
    ///   write is done;
    /// * a response the proxy does not store as it comes (not storable, a `206`) is handed over to an
    ///   ``Exchange`` task at its head, which relays it as any other;
    /// * a failure before the head reached the client is a `502` (`504` when the origin did not
    ///   answer in time), after it a closed connection; a reused connection that closed before any
    ///   byte of the answer is retried once on a new one (see ``OriginClient/execute(_:deadline:interim:)``).
    ///
    /// Its state is touched on one thread at a time: the client's event loop until a connection is
    /// leased, then the connection's event loop.
    final class DirectMiss: OriginPartSink, @unchecked Sendable {
        private let head: HTTPRequestHead
        private let base: String
        private let context: ProxyContext
        private let pool: OriginConnectionPool
        private let channel: any Channel
        private let keepAlive: Bool
        private let completion: @Sendable (ExchangeRecord) -> Void
        private var record: ExchangeRecord
        private let request: HTTPRequestHead
        private let deadline: NIODeadline
        private let requestTime = Date()

        private var connection: OriginConnection?
        private var loop: any EventLoop
        private var exchange = 0
        private var reused = false
        /// Whether any part of the answer came (a connection that fails after one is not retried).
        private var answered = false
        /// Whether the origin connection's exchange is over (ended, failed or handed over).
        private var originDone = false
        private var isDone = false
        /// Whether the response has ended (``respond()``), which may be before the fill ends.
        private var responded = false

        private var status = 0
        private var responseHeaders = HTTPHeaders()
        private var storable = HTTPHeaders()
        private var responseTime = Date()
        private var pendingHead: HTTPResponseHead?
        /// Whether the final head was written to the client (a failure then closes the connection).
        private var headWritten = false
        private var spool: BodySpool?
        private var complete = true
        private var held: ByteBuffer?
        private var received = 0
        private var expectedLength: Int?

        /// Whether a request can take this path, given that the disk tier has nothing for it; the
        /// caller then leads the fill of `base` (``FillCoordinator/lead(_:)``) or leaves it to an
        /// exchange.
        static func applies(to head: HTTPRequestHead, base: String, context: ProxyContext) -> Bool {
            guard head.method == .GET, context.client.pool != nil else { return false }
            // RFC 9111 §5.2.1.7: only-if-cached with nothing stored is a 504 (the exchange's).
            if head.headers[canonicalForm: "cache-control"].contains(where: { $0.lowercased() == "only-if-cached" }) {
                return false
            }
            // Stored partial content that the request may complete (RFC 9111 §3.3).
            return !context.partials.withLock { $0.contains(base) }
        }

        /// Starts the miss; the caller leads the fill of `base`, which this ends.
        ///
        /// - Parameter completion: Called once the response has ended, with its record.
        init(
            head: HTTPRequestHead, base: String, context: ProxyContext, channel: any Channel, keepAlive: Bool,
            record: ExchangeRecord, completion: @escaping @Sendable (ExchangeRecord) -> Void
        ) {
            self.head = head
            self.base = base
            self.context = context
            self.pool = context.client.pool!
            self.channel = channel
            self.keepAlive = keepAlive
            self.record = record
            self.completion = completion
            self.loop = channel.eventLoop
            var message = OriginRequest.make(head: head, client: record.client, stored: nil, context: context)
            message.body = nil
            self.request = context.client.requestHead(message)
            self.deadline = .now() + context.originTimeout
        }

        /// Leases a connection and sends the request.
        func start() {
            lease(fresh: false)
        }

        private func lease(fresh: Bool) {
            pool.lease(deadline: deadline, fresh: fresh, preferring: channel.eventLoop) { result in
                switch result {
                case .success(let (connection, reused)):
                    let loop = connection.channel.eventLoop
                    if loop.inEventLoop {
                        self.send(on: connection, reused: reused)
                    } else {
                        loop.execute { self.send(on: connection, reused: reused) }
                    }
                case .failure(let error):
                    self.fail(error)
                }
            }
        }

        /// Runs on the connection's event loop.
        private func send(on connection: OriginConnection, reused: Bool) {
            self.connection = connection
            self.loop = connection.channel.eventLoop
            self.reused = reused
            originDone = false
            do {
                exchange = try connection.handler.value.start(head: request, deadline: deadline, sink: self)
            } catch {
                ended(error)
            }
        }

        // MARK: - The origin's parts (on the connection's event loop)

        func received(_ part: OriginPart) {
            answered = true
            switch part {
            case .head(let head):
                let code = Int(head.status.code)
                if (100..<200).contains(code), code != 101 {
                    relayInterim(head)
                } else if code == 101 {
                    // The proxy never forwards `Upgrade`: an origin that switches protocols answered a
                    // request nobody made (RFC 9110 §15.2.2, §7.8), a bad gateway.
                    fail(ServeFailure.interimAsFinal(code))
                } else {
                    finalHead(head)
                }
            case .body(let bytes):
                body(bytes)
            }
        }

        func ended(_ error: (any Error)?) {
            originDone = true
            guard !isDone else { return }
            if let error {
                if !answered, reused, OriginClient.isClosedBeforeResponse(error) {
                    // RFC 9110 §9.2.2, RFC 9112 §9.3.1: the origin closed an idle connection as the
                    // request went out; once more on a new one.
                    reused = false
                    lease(fresh: true)
                    return
                }
                fail(error)
                return
            }
            guard status != 0, let spool else {
                fail(OriginClientError.connectionClosed)
                return
            }
            guard complete, ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders) else {
                spool.discard()
                finish()
                return
            }
            store(spool)
        }

        /// RFC 9110 §15.2: an interim response goes to the client at once, without its hop-by-hop
        /// fields and with the proxy's `Via`; never to an HTTP/1.0 client.
        private func relayInterim(_ interim: HTTPResponseHead) {
            guard !record.headSent, head.version.major > 1 || head.version.minor >= 1 else { return }
            var headers = ProxyHeaders.endToEnd(interim.headers)
            ProxyHeaders.addVia(to: &headers, version: head.version)
            let part = HTTPResponseHead(version: .http1_1, status: interim.status, headers: headers)
            channel.writeAndFlush(HTTPServerResponsePart.head(part), promise: nil)
        }

        private func finalHead(_ originHead: HTTPResponseHead) {
            responseTime = Date()
            status = Int(originHead.status.code)
            responseHeaders = ProxyHeaders.endToEnd(originHead.headers)
            record.cacheStatus = .miss
            let storable =
                status == 206
                ? nil
                : ServePolicy.storableHeaders(
                    method: head.method, requestHeaders: head.headers, status: status, responseHeaders: responseHeaders)
            guard let storable else {
                handOver(originHead)
                return
            }
            self.storable = storable
            var clientHeaders = responseHeaders
            ProxyHeaders.addVia(to: &clientHeaders, version: head.version)
            if !keepAlive { clientHeaders.replaceOrAdd(name: "Connection", value: "close") }
            record.status = status
            record.headSent = true
            pendingHead = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: clientHeaders)
            expectedLength = responseHeaders.first(name: "content-length").flatMap { Int($0) }
            spool = BodySpool(
                memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory,
                expectedLength: expectedLength)
        }

        private func body(_ chunk: ByteBuffer) {
            guard let spool, !isDone else { return }
            received += chunk.readableBytes
            if complete, !spool.append(chunk, limit: context.maximumStoredBody) { complete = false }
            if let previous = held {
                write(previous)
            } else if received != expectedLength, let head = pendingHead {
                pendingHead = nil  // more is coming: the client gets the head now
                send(.head(head))
            }
            held = chunk
        }

        /// A response the proxy does not store as it comes: the rest of it goes to an exchange task.
        private func handOver(_ originHead: HTTPResponseHead) {
            guard let connection, let parts = connection.handler.value.handOver(exchange: exchange) else {
                fail(OriginClientError.connectionClosed)
                return
            }
            originDone = true
            isDone = true
            let answer = Exchange.OriginAnswer(
                response: OriginResponse(
                    status: status, headers: originHead.headers,
                    body: OriginResponse.Body(OriginResponse.PartReader(parts, handOff: connection.handOff))),
                status: status, headers: responseHeaders, requestTime: requestTime, responseTime: responseTime)
            let writer = ResponseWriter(
                channel: channel, completion: completion, keepAlive: keepAlive, isHead: false, record: record)
            let (head, base, context) = (head, base, context)
            Task {
                var exchange = Exchange(head: head, body: nil, context: context, writer: writer)
                await exchange.relayFill(answer, base: base)
            }
        }

        // MARK: - The client

        private func write(_ buffer: ByteBuffer) {
            guard buffer.readableBytes > 0 else { return }
            record.bytes += buffer.readableBytes
            send(.body(.byteBuffer(buffer)))
        }

        /// Writes and flushes a part (after the head kept back, if any); while the client's channel
        /// is not writable, the origin is not read until the part reached the socket.
        private func send(_ part: HTTPServerResponsePart) {
            let head = pendingHead
            pendingHead = nil
            guard channel.isActive else {
                fail(ChannelError.ioOnClosedChannel)
                return
            }
            if let head { channel.write(HTTPServerResponsePart.head(head), promise: nil) }
            headWritten = true
            if channel.isWritable {
                channel.writeAndFlush(part, promise: nil)
                return
            }
            let (connection, exchange) = (connection, exchange)
            connection?.handler.value.pause(exchange: exchange)
            channel.writeAndFlush(part).hop(to: loop).whenComplete { result in
                switch result {
                case .success: connection?.handler.value.resumeReading(exchange: exchange)
                case .failure(let error): self.fail(error)
                }
            }
        }

        // MARK: - Storing and ending

        private func store(_ spool: BodySpool) {
            guard context.store.storesMissDirectly(base: base, responseHeaders: responseHeaders) else {
                // A `Vary` marker to read or write: the exchange's store, in a task.
                let (status, storable, responseHeaders, base, requestHeaders, requestTime, responseTime, context) = (
                    status, storable, responseHeaders, base, head.headers, requestTime, responseTime, context
                )
                let (loop, handOff) = (loop, SpoolHandOff(spool: spool))
                Task {
                    await Exchange.store(
                        handOff.spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                        requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime,
                        context: context)
                    loop.execute { self.finish() }
                }
                return
            }
            // As `ProxyContext.storeFetched`, on the event loop: nothing is stored once the URL
            // was invalidated, and what was stored meanwhile is removed before the store ends.
            guard let begun = context.fills.beginStore(base) else {
                spool.discard()
                finish()
                return
            }
            let cached = Exchange.storedResponse(
                spool, status: status, storable: storable, varyValues: [:], requestTime: requestTime,
                responseTime: responseTime)
            let stored = context.store.storeMiss(cached, key: base, bodyFile: spool.file, on: loop)
            // The disk store, on a disk thread, does not hold the client up: the client gets the
            // rest now, and the fill, which a request for the URL that misses the memory tier
            // waits for, ends with the store, so that such a request finds the response in the
            // memory tier or on disk, not at the origin. Only while the bodies waiting so stay
            // within ResponseStore.earlyEndLimit (the memory bound); a body spooled to a file,
            // and a miss with no disk store to wait for, end as before.
            let length = spool.length
            let endsEarly =
                spool.file == nil && context.store.storesOnDiskThreads && context.store.beginEarlyEnd(bytes: length)
            if endsEarly { respond() }
            stored.whenComplete { _ in
                if endsEarly { self.context.store.endEarlyEnd(bytes: length) }
                self.storeEnded(begun)
            }
        }

        /// Finishes once the store ended; when the URL was invalidated meanwhile, after removing
        /// what was stored (``ProxyContext/discard(base:)``).
        private func storeEnded(_ begun: FillCoordinator.Store) {
            guard context.fills.wasInvalidated(begun) else {
                context.fills.endStore(begun)
                finish()
                return
            }
            let (context, base, loop) = (context, base, loop)
            Task {
                await context.discard(base: base)
                context.fills.endStore(begun)
                loop.execute { self.finish() }
            }
        }

        /// Ends the response and the fill.
        private func finish() {
            guard !isDone else { return }
            isDone = true
            respond()
            context.fills.finish(base)
        }

        /// Ends the response: the head if still kept back, the held last chunk, the end.
        private func respond() {
            guard !responded else { return }
            responded = true
            if let head = pendingHead {
                pendingHead = nil
                channel.write(HTTPServerResponsePart.head(head), promise: nil)
            }
            if let last = held, last.readableBytes > 0 {
                record.bytes += last.readableBytes
                channel.write(HTTPServerResponsePart.body(.byteBuffer(last)), promise: nil)
            }
            held = nil
            let (channel, keepAlive, completion, record) = (channel, keepAlive, completion, record)
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { result in
                if case .failure = result { channel.close(promise: nil) }
                if !keepAlive { channel.close(promise: nil) }
                completion(record)
            }
        }

        /// Ends a miss that failed: a `502` (or `504`) when the client has no head yet, else the
        /// connection is closed (a truncated body must not look complete).
        private func fail(_ error: any Error) {
            guard !isDone else { return }
            isDone = true
            spool?.discard()
            spool = nil
            held = nil
            if !originDone, let connection {
                originDone = true
                connection.handler.value.consumerLeft(exchange: exchange)
            }
            context.fills.finish(base)
            context.logger.debug("\(head.method) \(head.uri) failed: \(error)")
            if headWritten {
                channel.close(promise: nil)
                completion(record)
                return
            }
            var record = record
            record.headSent = false  // a head kept back was never sent: the client gets the failure
            let writer = ResponseWriter(
                channel: channel, completion: completion, keepAlive: keepAlive, isHead: false, record: record)
            let (status, message) = Exchange.failure(error, context: context)
            Task {
                var writer = writer
                await writer.fail(status: status, message: message)
            }
        }
    }

    /// A spool that a task takes over: nothing else touches it after.
    private struct SpoolHandOff: @unchecked Sendable {
        let spool: BodySpool
    }

    extension Exchange {
        /// Relays an answer that a ``DirectMiss`` handed over at its head, as
        /// ``forward(stored:base:partialBase:)`` would have, and ends the fill of `base`.
        mutating func relayFill(_ answer: OriginAnswer, base: String) async {
            do {
                try await relay(answer, stored: nil, base: base)
            } catch {
                context.fills.finish(base)
                await failed(error)
                return
            }
            context.fills.finish(base)
        }
    }
#endif
