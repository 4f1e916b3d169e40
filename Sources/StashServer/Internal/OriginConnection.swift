#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash

    /// One part of an origin's answer, in the order the connection reads it: any interim (1xx)
    /// heads, the final head, then the body's chunks.
    enum OriginPart: Sendable {
        case head(HTTPResponseHead)
        case body(ByteBuffer)
    }

    /// The parts of one answer, read with back-pressure: the connection stops reading from the
    /// origin while the consumer (the client's connection, or the spool) is behind.
    typealias OriginParts = NIOThrowingAsyncSequenceProducer<
        OriginPart, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark,
        OriginConnectionHandler.Demand
    >

    /// Takes the parts of one answer from the connection's handler by callback.
    ///
    /// The parts come on the connection's event loop, instead of through ``OriginParts`` (see
    /// ``DirectMiss``): no task and no trip through an async sequence per part. It asks for
    /// back-pressure itself, with
    /// ``OriginConnectionHandler/pause(exchange:)`` and ``OriginConnectionHandler/resumeReading(exchange:)``.
    protocol OriginPartSink: AnyObject {
        /// The next part of the answer.
        func received(_ part: OriginPart)
        /// The answer ended: complete (`nil`), or with the error that ended it (the connection is closed).
        func ended(_ error: (any Error)?)
    }

    /// Shows ThreadSanitizer the order of a hand-off from an event loop to a task.
    ///
    /// When a producer resumes a task's continuation before the task has finished suspending, the
    /// task runs on without the Swift runtime telling ThreadSanitizer (the runtime's fast path in
    /// `swift_continuation_await` makes no acquire annotation; its atomics order the hand-off, but
    /// the runtime is not instrumented). A value the event loop made just before, such as the
    /// `HTTPResponseHead` NIO's decoder allocates, is then reported as a race on the task's first
    /// read. The producer passes this lock before it yields a part, the consumer after it takes
    /// one: a happens-before edge ThreadSanitizer sees, for two uncontended lock operations.
    final class HandOffFence: Sendable {
        private let lock = LockedValue(())

        func pass() { lock.withLock { _ in } }
    }

    /// How a request to the origin failed, as the proxy tells its outcomes apart.
    enum OriginClientError: Error, Equatable {
        /// No final response head before the exchange's deadline: the origin is slow (`504`).
        case deadlineExceeded
        /// No byte from the origin for the read timeout while the proxy waited for one.
        case readTimeout
        /// The origin closed the connection before the response was complete.
        case connectionClosed
        /// The proxy is stopping.
        case shutDown
    }

    /// The last handler of a connection to the origin: it turns the decoder's response parts into
    /// the current exchange's ``OriginParts``, reads only while the consumer wants more, enforces
    /// the head deadline and the read timeout, and hands the connection back to its pool once a
    /// response is complete (or closes it).
    ///
    /// Every method runs on the connection's event loop.
    final class OriginConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundIn = HTTPClientRequestPart
        typealias OutboundOut = HTTPClientRequestPart

        /// Tells the handler that the consumer of one exchange wants more, or has gone.
        final class Demand: NIOAsyncSequenceProducerDelegate, Sendable {
            let handler: NIOLoopBound<OriginConnectionHandler>
            let exchange: Int

            init(handler: NIOLoopBound<OriginConnectionHandler>, exchange: Int) {
                self.handler = handler
                self.exchange = exchange
            }

            func produceMore() {
                let (handler, exchange) = (handler, exchange)
                handler.eventLoop.execute { handler.value.resumeReading(exchange: exchange) }
            }

            func didTerminate() {
                let (handler, exchange) = (handler, exchange)
                handler.eventLoop.execute { handler.value.consumerLeft(exchange: exchange) }
            }
        }

        private let readTimeout: TimeAmount
        /// Passed before each part goes to an ``OriginParts`` sequence (see ``HandOffFence``).
        let handOff = HandOffFence()
        /// Called when a response is complete and the connection may carry another request, with
        /// how long the origin keeps it open while idle, if its response said so.
        var onReusable: ((TimeAmount?) -> Void)?
        private var context: ChannelHandlerContext?
        private var exchange = 0
        /// Who takes the parts of the exchange under way; `nil` while the connection is idle.
        private var consumer: Consumer?
        private var requestEnded = true
        private var keepAlive = true
        /// The `timeout` of the final response's `Keep-Alive` field, in seconds.
        private var originIdleSeconds: Int64?
        /// Whether the consumer wants more parts; reads are held back while it does not.
        private var wantsMore = true
        private var heldRead = false
        private var headDeadline: Scheduled<Void>?
        private var readTimer: Scheduled<Void>?
        private var lastRead = NIODeadline.now()

        init(readTimeout: TimeAmount) { self.readTimeout = readTimeout }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            onReusable = nil
        }

        private enum Consumer {
            case sequence(OriginParts.Source)
            case callback(any OriginPartSink)
        }

        /// Whether an exchange is under way.
        private var isUnderWay: Bool { consumer != nil }

        /// Whether no exchange is under way.
        var isIdle: Bool { consumer == nil }

        /// Sends `head` and starts reading its answer; with `endsRequest`, the request has no body
        /// and ends at once (otherwise the caller writes the body and its end through the channel).
        func start(head: HTTPRequestHead, endsRequest: Bool, deadline: NIODeadline) throws -> OriginParts {
            guard let context, context.channel.isActive, consumer == nil else {
                throw OriginClientError.connectionClosed
            }
            exchange += 1
            let sequence = makeParts(context: context)
            send(head: head, endsRequest: endsRequest, deadline: deadline, context: context)
            return sequence
        }

        /// Sends `head` like ``start(head:endsRequest:deadline:)`` (without a body), for an answer
        /// whose parts go to `sink`.
        ///
        /// - Returns: The exchange's number, for ``pause(exchange:)`` and ``resumeReading(exchange:)``.
        func start(head: HTTPRequestHead, deadline: NIODeadline, sink: any OriginPartSink) throws -> Int {
            guard let context, context.channel.isActive, consumer == nil else {
                throw OriginClientError.connectionClosed
            }
            exchange += 1
            consumer = .callback(sink)
            send(head: head, endsRequest: true, deadline: deadline, context: context)
            return exchange
        }

        /// Hands the rest of the answer under way, which went to a sink so far, to an ``OriginParts``
        /// sequence (a consumer that is an ``Exchange`` task); reading resumes if it was paused.
        func handOver(exchange: Int) -> OriginParts? {
            guard exchange == self.exchange, case .callback = consumer, let context else { return nil }
            let sequence = makeParts(context: context)
            resumeReading(exchange: exchange)
            return sequence
        }

        private func makeParts(context: ChannelHandlerContext) -> OriginParts {
            let made = OriginParts.makeSequence(
                elementType: OriginPart.self, failureType: (any Error).self,
                backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: true,
                delegate: Demand(handler: NIOLoopBound(self, eventLoop: context.eventLoop), exchange: exchange))
            consumer = .sequence(made.source)
            return made.sequence
        }

        private func send(
            head: HTTPRequestHead, endsRequest: Bool, deadline: NIODeadline, context: ChannelHandlerContext
        ) {
            requestEnded = false
            keepAlive = true
            wantsMore = true
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            headDeadline = context.eventLoop.scheduleTask(deadline: deadline) {
                bound.value.fail(OriginClientError.deadlineExceeded)
            }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if endsRequest {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                requestEnded = true
                watchReads()
            } else {
                context.flush()
            }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .end = unwrapOutboundIn(data) {
                requestEnded = true
                watchReads()
            }
            context.write(data, promise: promise)
        }

        func read(context: ChannelHandlerContext) {
            // An idle connection keeps reading, so that the origin closing it is seen at once.
            if wantsMore || consumer == nil {
                context.read()
            } else {
                heldRead = true
            }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            lastRead = .now()
            switch unwrapInboundIn(data) {
            case .head(let head):
                if head.status.code >= 200 || head.status.code == 101 {
                    headDeadline?.cancel()
                    headDeadline = nil
                    keepAlive = head.isKeepAlive
                    originIdleSeconds = Self.keepAliveTimeout(head.headers)
                }
                yield(.head(head))
            case .body(let bytes):
                yield(.body(bytes))
            case .end:
                guard let consumer else { return }
                self.consumer = nil
                stopTimers()
                wantsMore = true
                if heldRead {
                    heldRead = false
                    context.read()
                }
                if keepAlive, requestEnded, context.channel.isActive, originIdleSeconds.map({ $0 > 1 }) ?? true {
                    // A second short of the origin's own idle timeout: a request is not sent on a
                    // connection the origin is closing.
                    onReusable?(originIdleSeconds.map { .seconds($0 - 1) })
                } else {
                    context.close(promise: nil)
                }
                switch consumer {
                case .sequence(let source): source.finish()
                case .callback(let sink): sink.ended(nil)
                }
            }
        }

        /// The `timeout` parameter of a `Keep-Alive` field (`Keep-Alive: timeout=5, max=100`), which
        /// origins such as Apache httpd and Node.js send: how many seconds they keep an idle
        /// connection open.
        static func keepAliveTimeout(_ headers: HTTPHeaders) -> Int64? {
            for value in headers[canonicalForm: "keep-alive"] {
                let parameter = value.lowercased().split(separator: "=", maxSplits: 1)
                if parameter.count == 2, parameter[0].trimmingCharacters(in: .whitespaces) == "timeout" {
                    return Int64(parameter[1].trimmingCharacters(in: .whitespaces))
                }
            }
            return nil
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            fail(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail(OriginClientError.connectionClosed)
            context.fireChannelInactive()
        }

        private func yield(_ part: OriginPart) {
            switch consumer {
            case .sequence(let source):
                handOff.pass()
                if source.yield(part) == .stopProducing { stopReading() }
            case .callback(let sink):
                sink.received(part)
            case nil:
                return
            }
        }

        private func stopReading() {
            wantsMore = false
            readTimer?.cancel()
            readTimer = nil
        }

        /// The sink of `exchange` cannot take more for now: reads stop until
        /// ``resumeReading(exchange:)`` (and the read timeout does not run meanwhile).
        func pause(exchange: Int) {
            guard exchange == self.exchange, isUnderWay, wantsMore else { return }
            stopReading()
        }

        /// Ends the exchange under way with `error` and closes the connection.
        private func fail(_ error: any Error) {
            let consumer = self.consumer
            self.consumer = nil
            stopTimers()
            context?.close(promise: nil)
            switch consumer {
            case .sequence(let source): source.finish(error)
            case .callback(let sink): sink.ended(error)
            case nil: break
            }
        }

        private func stopTimers() {
            headDeadline?.cancel()
            headDeadline = nil
            readTimer?.cancel()
            readTimer = nil
        }

        func resumeReading(exchange: Int) {
            guard exchange == self.exchange, isUnderWay, !wantsMore else { return }
            wantsMore = true
            lastRead = .now()
            watchReads()
            if heldRead, let context {
                heldRead = false
                context.read()
            }
        }

        /// The consumer of `exchange` stopped reading: a response not read to its end leaves the
        /// connection in the middle of a message, so it is closed (a sink is not told).
        func consumerLeft(exchange: Int) {
            guard exchange == self.exchange, isUnderWay else { return }
            if case .callback = consumer { consumer = nil }
            fail(CancellationError())
        }

        /// Starts the read timeout once the request is sent, while the consumer wants more: it
        /// fires when no byte came for ``readTimeout`` (checked against the last read, so that a
        /// busy body does not reschedule a timer per chunk).
        private func watchReads() {
            guard requestEnded, wantsMore, isUnderWay, readTimer == nil, let context else { return }
            lastRead = .now()
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            readTimer = context.eventLoop.scheduleTask(in: readTimeout) { bound.value.checkReads() }
        }

        private func checkReads() {
            readTimer = nil
            guard isUnderWay, wantsMore, let context else { return }
            let quiet = NIODeadline.now() - lastRead
            if quiet >= readTimeout {
                fail(OriginClientError.readTimeout)
            } else {
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                readTimer = context.eventLoop.scheduleTask(in: readTimeout - quiet) { bound.value.checkReads() }
            }
        }
    }

    /// A connection to the origin with its handler.
    final class OriginConnection: Sendable {
        let channel: any Channel
        let handler: NIOLoopBound<OriginConnectionHandler>
        /// The handler's ``OriginConnectionHandler/handOff``, for the readers of its parts.
        let handOff: HandOffFence

        /// Makes the connection of `handler`; on the channel's event loop.
        init(channel: any Channel, handler: NIOLoopBound<OriginConnectionHandler>) {
            self.channel = channel
            self.handler = handler
            self.handOff = handler.value.handOff
        }

        /// Sends the request head and returns its answer's parts.
        func start(head: HTTPRequestHead, endsRequest: Bool, deadline: NIODeadline) async throws -> OriginParts {
            let handler = handler
            return try await channel.eventLoop.submit {
                try handler.value.start(head: head, endsRequest: endsRequest, deadline: deadline)
            }.get()
        }

        /// Streams `body` to the origin, then ends the request.
        ///
        /// Each chunk is written before the next is taken from the client (back-pressure). A body
        /// that fails (the client left) closes the connection, which ends the answer with an error.
        func send(body: RequestBody.Sequence) async {
            do {
                for try await chunk in body {
                    try await channel.writeAndFlush(HTTPClientRequestPart.body(.byteBuffer(chunk)))
                }
                try await channel.writeAndFlush(HTTPClientRequestPart.end(nil))
            } catch {
                channel.close(promise: nil)
            }
        }
    }
#endif
