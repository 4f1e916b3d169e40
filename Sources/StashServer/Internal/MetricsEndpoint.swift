#if Serve
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    /// The Prometheus endpoint on its own port: `GET /metrics` answers the registry's text format.
    enum MetricsEndpoint {
        static func bind(group: any EventLoopGroup, host: String, port: Int, metrics: ProxyMetrics) async throws
            -> any Channel
        {
            try await ServerBootstrap(group: group)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(Handler(metrics: metrics))
                    }
                }
                .bind(host: host, port: port).get()
        }

        final class Handler: ChannelInboundHandler {
            typealias InboundIn = HTTPServerRequestPart
            typealias OutboundOut = HTTPServerResponsePart

            private let metrics: ProxyMetrics
            private var target = ""
            private var keepAlive = true

            init(metrics: ProxyMetrics) { self.metrics = metrics }

            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                switch unwrapInboundIn(data) {
                case .head(let head):
                    target = head.method == .GET || head.method == .HEAD ? head.uri : ""
                    keepAlive = head.isKeepAlive
                case .body:
                    break
                case .end:
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
        }
    }
#endif
