#if Serve
    import NIOCore
    import NIOHTTP1

    /// Encodes the responses of a client connection in HTTP/1.1 (RFC 9112), in place of NIO's encoder.
    ///
    /// The proxy's own: a memory-tier hit writes its pre-encoded head (``encodeHead(status:headers:into:)``)
    /// below this handler, which NIO's encoder would not allow, as it pairs every response it encodes
    /// with a request method its decoder recorded. Here the ``ProxyHandler`` says whether the response
    /// in progress answers a `HEAD` (``ConnectionActivity/isAnsweringHead``): it answers one request at
    /// a time.
    final class ResponseEncoder: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = IOData

        private let activity: ConnectionActivity
        /// Whether the body of the response in progress is sent in chunks (RFC 9112 §7.1).
        private var isChunked = false
        /// Whether the response in progress has no body on the wire (`HEAD`, 1xx, 204, 304).
        private var hasNoBody = false

        init(activity: ConnectionActivity) { self.activity = activity }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head(let head):
                var headers = head.headers
                let code = Int(head.status.code)
                hasNoBody = activity.isAnsweringHead || (100..<200).contains(code) || code == 204 || code == 304
                isChunked = false
                if code == 204 || (100..<200).contains(code) {
                    // RFC 9110 §8.6: no Content-Length in these; RFC 9112 §6.1: nor Transfer-Encoding.
                    headers.remove(name: "content-length")
                    headers.remove(name: "transfer-encoding")
                } else if headers.contains(name: "content-length") {
                    headers.remove(name: "transfer-encoding")
                } else if !hasNoBody {
                    // RFC 9112 §6.3: without a length, a keep-alive connection needs chunked framing.
                    headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
                    isChunked = true
                }
                var buffer = context.channel.allocator.buffer(capacity: 256)
                Self.encodeHead(status: head.status, headers: headers, into: &buffer)
                buffer.writeStaticString("\r\n")
                context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
            case .body(let body):
                guard !hasNoBody, body.readableBytes > 0 else {
                    promise?.succeed()
                    return
                }
                guard isChunked else {
                    context.write(wrapOutboundOut(body), promise: promise)
                    return
                }
                var size = context.channel.allocator.buffer(capacity: 12)
                size.writeString(String(body.readableBytes, radix: 16))
                size.writeStaticString("\r\n")
                context.write(wrapOutboundOut(.byteBuffer(size)), promise: nil)
                context.write(wrapOutboundOut(body), promise: nil)
                context.write(wrapOutboundOut(.byteBuffer(ByteBuffer(string: "\r\n"))), promise: promise)
            case .end:
                // Trailers are not forwarded (a proxy may drop them, RFC 9110 §6.5.1).
                if isChunked {
                    context.write(wrapOutboundOut(.byteBuffer(ByteBuffer(string: "0\r\n\r\n"))), promise: promise)
                } else {
                    context.write(wrapOutboundOut(.byteBuffer(ByteBuffer())), promise: promise)
                }
                isChunked = false
                hasNoBody = false
            }
        }

        /// Writes an HTTP/1.1 status line and header field lines, without the blank line that ends
        /// the head.
        static func encodeHead(status: HTTPResponseStatus, headers: HTTPHeaders, into buffer: inout ByteBuffer) {
            buffer.writeStaticString("HTTP/1.1 ")
            buffer.writeString(String(status.code))
            buffer.writeStaticString(" ")
            buffer.writeString(status.reasonPhrase)
            buffer.writeStaticString("\r\n")
            for (name, value) in headers {
                buffer.writeString(name)
                buffer.writeStaticString(": ")
                buffer.writeString(value)
                buffer.writeStaticString("\r\n")
            }
        }
    }
#endif
