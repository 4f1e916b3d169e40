#if Serve
    import NIOCore

    /// The header-time and idle limits of client connections.
    struct ConnectionLimits: Sendable {
        var headerTimeout: TimeAmount
        var idleTimeout: TimeAmount
    }

    /// What the byte observer in front of the HTTP decoder saw (when a request head began to
    /// arrive), its way to the socket below the HTTP handlers, and what the response encoder needs
    /// to know of the request being answered.
    final class ConnectionActivity {
        var headStarted: NIODeadline?
        /// Whether the response in progress answers a `HEAD` request (it has no body on the wire).
        var isAnsweringHead = false
        fileprivate var rawContext: ChannelHandlerContext?

        /// Writes bytes that are already HTTP/1.1 to the socket, below the HTTP handlers.
        func writeEncoded(_ buffer: ByteBuffer) {
            rawContext?.write(NIOAny(IOData.byteBuffer(buffer)), promise: nil)
        }

        /// Writes already encoded HTTP/1.1 bytes or a file region to the socket, below the HTTP
        /// handlers; `promise` completes when the socket took them (or the write failed).
        func write(_ data: IOData, promise: EventLoopPromise<Void>?) {
            guard let rawContext else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            rawContext.write(NIOAny(data), promise: promise)
        }

        /// Sends what was written.
        func flush() {
            rawContext?.flush()
        }

        /// Writes `text` to the socket as it is, then closes the connection.
        func sendAndClose(_ text: String) {
            guard let context = rawContext else { return }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(NIOAny(ByteBuffer(string: text)), promise: written)
            let channel = context.channel
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Notes when the bytes of a new request start arriving, for the header-time limit.
    final class ActivityObserver: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        private let activity: ConnectionActivity

        init(activity: ConnectionActivity) { self.activity = activity }

        func handlerAdded(context: ChannelHandlerContext) { activity.rawContext = context }

        func handlerRemoved(context: ChannelHandlerContext) { activity.rawContext = nil }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if activity.headStarted == nil { activity.headStarted = .now() }
            context.fireChannelRead(data)
        }
    }
#endif
