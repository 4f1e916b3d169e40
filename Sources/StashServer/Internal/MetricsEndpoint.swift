#if Serve
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    /// The admin listener on its own port: `GET /metrics` answers the registry's text format, and
    /// `PURGE /path` or `PURGE /path*` purges stored responses (see ``Purge``).
    enum MetricsEndpoint {
        static func bind(group: any EventLoopGroup, host: String, port: Int, context: ProxyContext) async throws
            -> any Channel
        {
            try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(Handler(context: context))
                    }
                }
                .bind(host: host, port: port).get()
        }

        final class Handler: ChannelInboundHandler {
            typealias InboundIn = HTTPServerRequestPart
            typealias OutboundOut = HTTPServerResponsePart

            private let proxy: ProxyContext
            private var metrics: ProxyMetrics { proxy.metrics }
            private var target = ""
            private var keepAlive = true
            private var purge: Purge.Scope?
            private var refusal: String?

            init(context: ProxyContext) { self.proxy = context }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                switch unwrapInboundIn(data) {
                case .head(let head):
                    target = head.method == .GET || head.method == .HEAD ? head.uri : ""
                    keepAlive = head.isKeepAlive
                    (purge, refusal) = (nil, nil)
                    if head.method == .PURGE {
                        switch RequestTarget.check(head, options: proxy.options) {
                        case .valid(let target): purge = Purge.scope(of: target)
                        case .invalid(let reason): refusal = reason
                        }
                    }
                case .body:
                    break
                case .end:
                    if let refusal {
                        respond(.badRequest, "stash serve: cannot purge: \(refusal)\n", context: context)
                        return
                    }
                    if let purge {
                        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                        let store = proxy.store
                        let eventLoop = context.eventLoop
                        Task {
                            let count = await Purge.run(purge, store: store)
                            let (status, text) = Purge.answer(purge, count: count)
                            eventLoop.execute {
                                let (handler, context) = loopBound.value
                                handler.respond(status, text, context: context)
                            }
                        }
                        return
                    }
                    let found = target == "/metrics" || target.hasPrefix("/metrics?")
                    let body = found ? ByteBuffer(bytes: metrics.render()) : ByteBuffer(string: "not found\n")
                    var headers = HTTPHeaders()
                    headers.add(
                        name: "Content-Type",
                        value: found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
                    headers.add(name: "Content-Length", value: String(body.readableBytes))
                    let head = HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers)
                    context.write(wrapOutboundOut(.head(head)), promise: nil)
                    context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                    if keepAlive {
                        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                    } else {
                        let written = context.eventLoop.makePromise(of: Void.self)
                        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
                        let channel = context.channel
                        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                    }
                }
            }

            private func respond(_ status: HTTPResponseStatus, _ text: String, context: ChannelHandlerContext) {
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
                headers.add(name: "Content-Length", value: String(text.utf8.count))
                if !keepAlive { headers.add(name: "Connection", value: "close") }
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                    promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                let written = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
                if !keepAlive {
                    let channel = context.channel
                    written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                }
            }
        }
    }
#endif
