#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// Serves one client connection: answers fresh memory-tier hits on the event loop, with the stored
    /// head's pre-encoded bytes and body buffer and no copy of the body; reads other `GET`s and
    /// `HEAD`s from the disk tier on a ``DiskReader`` thread and answers a fresh disk hit on the
    /// event loop too (its value file with `sendfile`); runs a plain miss that leads its URL's fill
    /// as a ``DirectMiss`` (callbacks, no task); and hands every other request to an ``Exchange`` task.
    ///
    /// It answers pipelined requests in order, one at a time (RFC 9112 §9.3.2): parts of a request that
    /// arrive while the response to an earlier one is in progress wait in a queue, and the connection
    /// stops reading until that response has ended. It also enforces the connection's header-time and
    /// idle limits, and finishes the current response before closing when the server drains.
    final class ProxyHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        /// Tells a connection that the server is shutting down.
        struct Drain: Sendable {}

        private enum State {
            /// Waiting for a request head.
            case idle
            /// A request being answered: its body goes to `body` (if any) until its end.
            case busy(body: RequestBody.Sequence.Source?, requestEnded: Bool, responseEnded: Bool)
        }

        private let context: ProxyContext
        private let limits: ConnectionLimits
        let activity: ConnectionActivity
        private var state = State.idle
        private var draining = false
        private var timer: Scheduled<Void>?
        private var idleSince = NIODeadline.now()
        private var clientAddress = "-"
        /// The channel's allocator, kept from ``handlerAdded(context:)``: a hit asks no existential for it.
        private var allocator = ByteBufferAllocator()
        /// Request parts that arrived while a response was in progress.
        private var queued = CircularBuffer<HTTPServerRequestPart>()
        /// Whether a read was asked for while a response was in progress.
        private var isReadHeld = false
        private var isReplayingQueue = false
        /// Set once a request was answered with `Connection: close`: later requests are not answered.
        private var isClosing = false
        /// A decoding error that came after requests still waiting in ``queued``.
        private var deferredError: (any Error)?
        /// Whether the request being read asked to switch protocols.
        private var isUpgradeAsked = false

        init(context: ProxyContext, limits: ConnectionLimits, activity: ConnectionActivity) {
            self.context = context
            self.limits = limits
            self.activity = activity
        }

        func handlerAdded(context: ChannelHandlerContext) {
            allocator = context.channel.allocator
            clientAddress = context.channel.remoteAddress?.ipAddress ?? "-"
            if context.channel.isActive { enterIdle(context: context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            enterIdle(context: context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            timer?.cancel()
            if case .busy(let body, let requestEnded, _) = state, !requestEnded {
                body?.finish(ChannelError.eof)
            }
            queued.removeAll()
            context.fireChannelInactive()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is Drain {
                draining = true
                if case .idle = state { context.close(promise: nil) }
                return
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part = unwrapInboundIn(data)
            noteUpgrade(part, context: context)
            if isAwaitingResponse || !queued.isEmpty {
                queued.append(part)
                return
            }
            handle(part, context: context)
        }

        func read(context: ChannelHandlerContext) {
            if isAwaitingResponse || !queued.isEmpty {
                isReadHeld = true
                return
            }
            context.read()
        }

        /// Whether the current request has been read whole and its response has not ended yet.
        private var isAwaitingResponse: Bool {
            if case .busy(_, true, false) = state { return true }
            return false
        }

        private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
            if isClosing, case .idle = state { return }
            switch part {
            case .head(let head):
                receive(head, context: context)
            case .body(let buffer):
                guard case .busy(let body, false, _) = state, let body else { return }
                if body.yield(buffer) == .stopProducing {
                    context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                }
            case .end:
                guard case .busy(let body, _, let responseEnded) = state else { return }
                body?.finish()
                state = .busy(body: nil, requestEnded: true, responseEnded: responseEnded)
                if responseEnded { exchangeEnded(context: context) }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if isAwaitingResponse || !queued.isEmpty {
                // Bytes after complete requests that wait for their turn (such as data after a request
                // with `Connection: close`): those requests are answered first.
                deferredError = error
                return
            }
            failed(error, context: context)
        }

        private func failed(_ error: any Error, context: ChannelHandlerContext) {
            guard case .idle = state, context.channel.isActive, !isClosing else {
                context.close(promise: nil)
                return
            }
            // A request head the decoder refused: answer it (RFC 9110 §15.5.1, RFC 6585 §5) and close.
            let status: HTTPResponseStatus =
                (error as? HTTPParserError) == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
            respondAndClose(status, context: context)
        }

        // MARK: - Requests

        private func receive(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
            var head = head
            // The common head (origin-form, one plain `Host`) passes without the full check's verdict.
            if !RequestTarget.isPlainOriginForm(head) {
                switch RequestTarget.check(head, options: self.context.options) {
                case .valid(let target):
                    if target != head.uri { head.uri = target }
                case .invalid(let reason):
                    // RFC 9112 §3.2, §3.3: 400, and the connection closes (its framing is in doubt).
                    self.context.logger.debug("refused \(head.method) \(head.uri): \(reason)")
                    isClosing = true
                    respondAndClose(.badRequest, context: context)
                    return
                }
            }
            let keepAlive = head.isKeepAlive && !draining
            // The method by its case: `==` on `HTTPMethod` compares raw-value strings.
            let isGetOrHead: Bool
            switch head.method {
            case .GET:
                isGetOrHead = true
                activity.isAnsweringHead = false
            case .HEAD:
                isGetOrHead = true
                activity.isAnsweringHead = true
            default:
                isGetOrHead = false
                activity.isAnsweringHead = false
            }
            if !keepAlive { isClosing = true }
            var record = ExchangeRecord(
                method: head.method.rawValue, target: head.uri, version: head.version, client: clientAddress)
            let isCacheable = isGetOrHead && !head.headers.contains(name: "range")
            let base = isCacheable ? self.context.store.baseKey(target: head.uri) : ""
            if isCacheable, serveFromMemory(head, base: base, keepAlive, &record, context) {
                state = .busy(body: nil, requestEnded: false, responseEnded: true)
                self.context.finished(record)
                return
            }
            let hasBody =
                head.headers.contains(name: "content-length") && head.headers.first(name: "content-length") != "0"
                || head.headers.contains(name: "transfer-encoding")
            if isCacheable, !hasBody {
                // The direct disk-hit path: one read on a disk thread, then, on this loop, a plain
                // fresh hit is written at once; anything else goes to an exchange with what was read.
                state = .busy(body: nil, requestEnded: false, responseEnded: false)
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let isReading = self.context.store.diskRead(
                    base: base, requestHeaders: head.headers, on: context.eventLoop
                ) { [head, record] result in
                    let (handler, context) = loopBound.value
                    handler.diskReadEnded(result, head: head, keepAlive: keepAlive, record: record, context: context)
                }
                if isReading { return }
            }
            var body: RequestBody?
            var source: RequestBody.Sequence.Source?
            if hasBody { (body, source) = RequestBody.make(channel: context.channel) }
            state = .busy(body: source, requestEnded: false, responseEnded: false)
            startExchange(head, keepAlive: keepAlive, record: record, body: body, prefetched: nil, context: context)
        }

        /// Hands a request to an ``Exchange`` task; ``state`` already says it is in progress.
        private func startExchange(
            _ head: HTTPRequestHead, keepAlive: Bool, record: ExchangeRecord, body: RequestBody?,
            prefetched: ResponseStore.Found??, context: ChannelHandlerContext
        ) {
            if body == nil, prefetched == nil, self.context.store.disk == nil, self.context.store.shared == nil,
                head.method == .GET, !head.headers.contains(name: "range"),
                self.context.store.memoryHit(
                    base: self.context.store.baseKey(target: head.uri), requestHeaders: head.headers) == nil,
                startDirectMiss(head, keepAlive: keepAlive, record: record, context: context)
            {
                return  // memory only, and the memory tier has nothing for it
            }
            let proxy = self.context
            let writer = ResponseWriter(
                channel: context.channel, completion: responseCompletion(context: context), keepAlive: keepAlive,
                isHead: head.method == .HEAD, record: record)
            Task {
                var exchange = Exchange(
                    head: head, body: body, context: proxy, writer: writer, prefetched: prefetched)
                await exchange.run()
            }
        }

        /// Answers a request from what the direct disk read found: at once for a plain fresh hit,
        /// else through an ``Exchange`` that starts from it (a read that failed: from scratch).
        private func diskReadEnded(
            _ result: Result<ResponseStore.Found?, any Error>, head: HTTPRequestHead, keepAlive: Bool,
            record: ExchangeRecord, context: ChannelHandlerContext
        ) {
            var record = record
            let prefetched: ResponseStore.Found??
            switch result {
            case .success(let found):
                let now = Date()
                if let found, context.channel.isActive,
                    ServePolicy.reuse(
                        method: head.method, requestHeaders: head.headers, stored: found.response, now: now)
                        == .fresh,
                    writeFresh(
                        found.response, entry: found.entry, tier: found.tier, head, keepAlive, now: now, &record,
                        context)
                {
                    self.context.finished(record)
                    responseEnded(context: context)
                    return
                }
                if found == nil, startDirectMiss(head, keepAlive: keepAlive, record: record, context: context) {
                    return
                }
                prefetched = .some(found)
            case .failure:
                prefetched = nil
            }
            startExchange(
                head, keepAlive: keepAlive, record: record, body: nil, prefetched: prefetched, context: context)
        }

        /// Starts a ``DirectMiss`` for a `GET` without `Range` or content that no tier has, when it
        /// applies and this request leads the URL's fill; `false` leaves the request to an exchange.
        private func startDirectMiss(
            _ head: HTTPRequestHead, keepAlive: Bool, record: ExchangeRecord, context: ChannelHandlerContext
        ) -> Bool {
            guard context.channel.isActive else { return false }
            let base = self.context.store.baseKey(target: head.uri)
            guard DirectMiss.applies(to: head, base: base, context: self.context), self.context.fills.lead(base)
            else { return false }
            DirectMiss(
                head: head, base: base, context: self.context, channel: context.channel, keepAlive: keepAlive,
                record: record, completion: responseCompletion(context: context)
            ).start()
            return true
        }

        /// What a response that ends off this handler's call stack calls with its record: the record
        /// goes to the metrics and the access log, and the connection moves on (on its loop).
        private func responseCompletion(context: ChannelHandlerContext) -> @Sendable (ExchangeRecord) -> Void {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            let proxy = self.context
            return { record in
                proxy.finished(record)
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.responseEnded(context: context)
                }
            }
        }

        /// Writes a fresh memory-tier hit at once; `false` when the memory tier cannot answer.
        private func serveFromMemory(
            _ head: HTTPRequestHead, base: String, _ keepAlive: Bool, _ record: inout ExchangeRecord,
            _ context: ChannelHandlerContext
        ) -> Bool {
            guard let stored = self.context.store.memoryHit(base: base, requestHeaders: head.headers),
                stored.body != nil
            else {
                return false
            }
            let now = Date()
            guard
                ServePolicy.reuse(method: head.method, requestHeaders: head.headers, stored: stored, now: now) == .fresh
            else {
                return false
            }
            guard keepAlive, head.version == .http1_1, let body = stored.body,
                !ConditionalRequest.isConditional(head.headers)
            else {
                return writeFresh(stored, entry: nil, tier: .memory, head, keepAlive, now: now, &record, context)
            }
            // The common hit, as ``writeFresh(_:entry:tier:_:_:now:_:_:)`` would write it but with no
            // promise and no branch it does not take: the stored head's bytes and its own `Age`
            // (RFC 9111 §4.2.3), then the stored body buffer, without a copy.
            var encoded = allocator.buffer(capacity: stored.encodedHead.readableBytes + 48)
            encoded.writeImmutableBuffer(stored.encodedHead)
            encoded.writeStaticString("Age: ")
            Self.writeDecimal(ServePolicy.ageSeconds(stored, now: now), into: &encoded)
            encoded.writeStaticString("\r\n\r\n")
            activity.writeEncoded(encoded)
            if !activity.isAnsweringHead, body.readableBytes > 0 {  // set for this request by receive
                activity.writeEncoded(body)
                record.bytes = body.readableBytes
            }
            activity.flush()
            record.status = stored.status
            record.cacheStatus = .hit
            record.tier = .memory
            return true
        }

        /// Writes a non-negative number in decimal digits, without making a string of it.
        private static func writeDecimal(_ value: Int, into buffer: inout ByteBuffer) {
            var divisor = 1
            while divisor <= value / 10 { divisor *= 10 }
            var rest = max(0, value)
            while divisor > 0 {
                buffer.writeInteger(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }

        /// Ignores `Upgrade` (RFC 9110 §7.8).
        ///
        /// The decoder stops parsing after a request that asks for it, so it is replaced once that
        /// request has been read.
        private func noteUpgrade(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
            switch part {
            case .head(let head):
                isUpgradeAsked = RequestTarget.asksForUpgrade(head)
            case .end where isUpgradeAsked:
                isUpgradeAsked = false
                RequestTarget.replaceDecoder(
                    in: context.pipeline, maximumHeaderSize: self.context.options.maximumHeaderSize)
            default:
                break
            }
        }

        private func responseEnded(context: ChannelHandlerContext) {
            guard case .busy(let body, let requestEnded, _) = state else { return }
            state = .busy(body: body, requestEnded: requestEnded, responseEnded: true)
            if requestEnded { exchangeEnded(context: context) }
        }

        private func exchangeEnded(context: ChannelHandlerContext) {
            state = .idle
            if draining {
                context.close(promise: nil)
                return
            }
            enterIdle(context: context)
            guard !isReplayingQueue else { return }
            isReplayingQueue = true
            while !isAwaitingResponse, let part = queued.popFirst() {
                handle(part, context: context)
            }
            isReplayingQueue = false
            if let error = deferredError, !isAwaitingResponse, queued.isEmpty {
                deferredError = nil
                failed(error, context: context)
                return
            }
            if isReadHeld, !isAwaitingResponse, queued.isEmpty {
                isReadHeld = false
                context.read()
            }
        }

        // MARK: - Limits

        private func enterIdle(context: ChannelHandlerContext) {
            idleSince = .now()
            activity.headStarted = nil
            // One timer per connection, not one per request: when it fires it checks the deadlines of
            // the current state and re-arms itself.
            if timer == nil, context.channel.isActive { schedule(after: limits.headerTimeout, context: context) }
        }

        private func schedule(after delay: TimeAmount, context: ChannelHandlerContext) {
            timer?.cancel()
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            timer = context.eventLoop.scheduleTask(in: delay) {
                let (handler, context) = loopBound.value
                handler.checkLimits(context: context)
            }
        }

        /// Slowloris: a head that takes longer than the header timeout gets a 408; a connection idle
        /// for longer than the idle timeout is closed.
        private func checkLimits(context: ChannelHandlerContext) {
            guard case .idle = state, context.channel.isActive else {
                timer = nil  // the end of the exchange re-arms it
                return
            }
            let now = NIODeadline.now()
            if let started = activity.headStarted {
                let remaining = started + limits.headerTimeout - now
                if remaining <= .zero {
                    respondAndClose(.requestTimeout, context: context)
                } else {
                    schedule(after: remaining, context: context)
                }
                return
            }
            let remaining = idleSince + limits.idleTimeout - now
            if remaining <= .zero {
                context.close(promise: nil)
            } else {
                schedule(after: min(remaining, limits.headerTimeout), context: context)
            }
        }

        /// Answers a head that never became a request, below the HTTP handlers (which only answer
        /// requests), then closes the connection.
        private func respondAndClose(_ status: HTTPResponseStatus, context: ChannelHandlerContext) {
            state = .busy(body: nil, requestEnded: true, responseEnded: true)
            timer?.cancel()
            activity.sendAndClose(
                "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            var record = ExchangeRecord(
                method: "-", target: "-", version: .http1_1, client: clientAddress)
            record.status = Int(status.code)
            self.context.finished(record)
        }
    }
#endif
