// The floor of an HTTP relay on SwiftNIO: what any proxy built on SwiftNIO's HTTP/1.1 codec pays per
// request before it caches anything. It accepts clients, gives each client connection one keep-alive
// connection to the origin on the same event loop (no thread hand-off, no pool, no lookup), decodes
// each request and response with NIOHTTP1 and encodes them again, and stores nothing.
//
//   StashRelayFloor LISTEN-PORT ORIGIN-PORT      (both on 127.0.0.1; one event loop per core)
//
// Benchmarks/serve-miss-cpu.sh runs it as `nio-relay` beside `stash serve` and nginx. It serves one
// request at a time per connection (no pipelining) and forwards without back-pressure: enough for a
// pass of GETs of bodies up to 512 KiB, not a proxy for anything else.
#if Serve
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    /// The origin's side of one client connection: its response parts go to the client as they come.
    final class OriginSide: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let client: any Channel

        init(client: any Channel) { self.client = client }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                client.write(HTTPServerResponsePart.head(head), promise: nil)
            case .body(let bytes):
                client.write(HTTPServerResponsePart.body(.byteBuffer(bytes)), promise: nil)
            case .end:
                client.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) { client.flush() }

        func channelInactive(context: ChannelHandlerContext) { client.close(promise: nil) }
    }

    /// One client connection: its requests go to its own origin connection, opened at its first.
    final class ClientSide: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        private let originPort: Int
        private var origin: (any Channel)?
        private var waiting: [HTTPClientRequestPart] = []
        private var connecting = false

        init(originPort: Int) { self.originPort = originPort }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part: HTTPClientRequestPart
            switch unwrapInboundIn(data) {
            case .head(var head):
                head.headers.replaceOrAdd(name: "Host", value: "127.0.0.1:\(originPort)")
                part = .head(head)
            case .body(let bytes):
                part = .body(.byteBuffer(bytes))
            case .end(let trailers):
                part = .end(trailers)
            }
            if let origin {
                origin.write(part, promise: nil)
                if case .end = part { origin.flush() }
                return
            }
            waiting.append(part)
            guard !connecting else { return }
            connecting = true
            let client = context.channel
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            ClientBootstrap(group: context.eventLoop)
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(OriginSide(client: client))
                    }
                }
                .connect(host: "127.0.0.1", port: originPort)
                .whenComplete { result in
                    let side = loopBound.value
                    switch result {
                    case .success(let channel):
                        side.origin = channel
                        for part in side.waiting { channel.write(part, promise: nil) }
                        side.waiting = []
                        channel.flush()
                    case .failure:
                        client.close(promise: nil)
                    }
                }
        }

        func channelInactive(context: ChannelHandlerContext) { origin?.close(promise: nil) }
    }

    let arguments = CommandLine.arguments
    guard arguments.count == 3, let listenPort = Int(arguments[1]), let originPort = Int(arguments[2]) else {
        print("usage: StashRelayFloor LISTEN-PORT ORIGIN-PORT")
        exit(2)
    }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    let server = try ServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.backlog, value: 1024)
        .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                try channel.pipeline.syncOperations.addHandler(ClientSide(originPort: originPort))
            }
        }
        .bind(host: "127.0.0.1", port: listenPort).wait()
    try server.closeFuture.wait()
#else
    print("StashRelayFloor needs the Serve trait (SwiftNIO): swift build --traits Serve --product StashRelayFloor")
#endif
