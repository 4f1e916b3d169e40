#if Serve
    import NIOCore
    import NIOHTTP1

    /// The request-target and `Host` rules of RFC 9112 §3.2 and §3.3, applied before a request is
    /// looked up or forwarded: what a reverse proxy accepts, and the origin-form target it works with.
    enum RequestTarget {
        /// What ``check(_:options:)`` decided.
        enum Verdict: Equatable {
            /// Serve the request with this origin-form target (path and query).
            case valid(String)
            /// Answer `400 Bad Request` and close the connection; the reason is for the log.
            case invalid(String)
        }

        /// Checks a request head.
        ///
        /// * RFC 9112 §3.2: an HTTP/1.1 request without `Host`, with more than one `Host` line, or with
        ///   an invalid `Host` value is refused; so is any version but 1.x (HTTP/0.9 included).
        /// * §3.2.1: an origin-form target (`/path?query`) is kept as it is.
        /// * §3.2.2: an absolute-form target (`http://host/path`) is accepted when its authority is the
        ///   origin's or an alias (``ServeOptions/authorities``), and reduced to its path and query;
        ///   `Host` is then ignored, as the section requires.
        /// * RFC 9110 §4.2.4 and §4.2.5: userinfo (`user@host`) and a fragment (`#part`) are refused.
        /// * §3.2.3 and §3.2.4: the authority form (`CONNECT`) is refused; the asterisk form only for
        ///   `OPTIONS`.
        ///
        /// - Complexity: O(*n*) in the target's and the `Host` lines' length.
        static func check(_ head: HTTPRequestHead, options: ServeOptions) -> Verdict {
            guard head.version.major == 1 else { return .invalid("HTTP version \(head.version)") }
            // One pass over the fields, without collecting the Host lines into an array.
            var host: String?
            var hostCount = 0
            for (name, value) in head.headers where isHostName(name) {
                hostCount += 1
                if hostCount == 1 { host = value }
            }
            if head.version.minor >= 1, hostCount == 0 { return .invalid("no Host") }
            if hostCount > 1 { return .invalid("\(hostCount) Host lines") }
            if let host, !isPlainHost(host), !isValidHost(host) { return .invalid("invalid Host '\(host)'") }
            if head.method == .CONNECT { return .invalid("CONNECT (authority form)") }
            let uri = head.uri
            if uri.utf8.contains(UInt8(ascii: "#")) { return .invalid("a fragment in the target") }
            if uri.utf8.first == UInt8(ascii: "/") { return .valid(uri) }
            if uri == "*" { return head.method == .OPTIONS ? .valid(uri) : .invalid("asterisk form") }
            return absolute(uri, options: options)
        }

        /// Whether ``check(_:options:)`` would accept a head with its target as it is.
        ///
        /// Decided without a verdict or the options: HTTP/1.x, not `CONNECT`, one `Host` line of the
        /// common shape (see ``isPlainHost(_:)``), and an origin-form target without a fragment. The
        /// hit path's test; `false` says only that the full check must decide.
        ///
        /// - Complexity: O(*n*) in the target's and the `Host` lines' length.
        static func isPlainOriginForm(_ head: HTTPRequestHead) -> Bool {
            guard head.version.major == 1 else { return false }
            if case .CONNECT = head.method { return false }
            var hostCount = 0
            var isPlain = false
            for (name, value) in head.headers where isHostName(name) {
                hostCount += 1
                isPlain = isPlainHost(value)
            }
            guard hostCount == 1, isPlain else { return false }
            var uri = head.uri
            return uri.withUTF8 { bytes in
                bytes.first == UInt8(ascii: "/") && !bytes.contains(UInt8(ascii: "#"))
            }
        }

        /// `http://authority/path?query` reduced to `/path?query`, or why it is refused.
        private static func absolute(_ uri: String, options: ServeOptions) -> Verdict {
            guard let schemeEnd = uri.range(of: "://") else { return .invalid("target '\(uri)'") }
            let scheme = uri[..<schemeEnd.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { return .invalid("scheme '\(scheme)'") }
            let rest = uri[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if authority.contains("@") { return .invalid("userinfo in the target") }
            guard let parts = split(authority: authority), !parts.host.isEmpty else {
                return .invalid("authority '\(authority)'")
            }
            let (host, port) = (parts.host, parts.port)
            guard options.accepts(host: host, port: port, scheme: scheme) else {
                return .invalid("'\(authority)' is not the origin's authority nor an alias")
            }
            let target = rest[authorityEnd...]
            if target.isEmpty { return .valid("/") }
            return .valid(target.hasPrefix("?") ? "/" + target : String(target))
        }

        /// `host[:port]` (an IPv6 host in brackets) split; `nil` for a port that is not a number.
        private static func split(authority: Substring) -> (host: String, port: Int?)? {
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                let host = String(authority[authority.index(after: authority.startIndex)..<close])
                let after = authority[authority.index(after: close)...]
                if after.isEmpty { return (host, nil) }
                guard after.hasPrefix(":"), let port = Int(after.dropFirst()), (0...65_535).contains(port) else {
                    return nil
                }
                return (host, port)
            }
            guard let colon = authority.lastIndex(of: ":") else { return (String(authority), nil) }
            let portText = authority[authority.index(after: colon)...]
            if portText.isEmpty { return (String(authority[..<colon]), nil) }
            guard let port = Int(portText), (0...65_535).contains(port) else { return nil }
            return (String(authority[..<colon]), port)
        }

        /// Whether a field name is `Host`, in any case.
        private static func isHostName(_ name: String) -> Bool {
            guard name.utf8.count == 4 else { return false }
            var name = name
            return name.withUTF8 { bytes in
                bytes[0] | 0x20 == UInt8(ascii: "h") && bytes[1] | 0x20 == UInt8(ascii: "o")
                    && bytes[2] | 0x20 == UInt8(ascii: "s") && bytes[3] | 0x20 == UInt8(ascii: "t")
            }
        }

        /// Whether a `Host` value has the common shape, checked in one pass over its bytes.
        ///
        /// The shape: a registered name or IPv4 address (letters, digits, `-`, `.`), and optionally
        /// `:` and a port of one to five digits up to 65535. Every value it accepts
        /// ``isValidHost(_:)`` accepts too; `false` says only that the full check must decide.
        private static func isPlainHost(_ value: String) -> Bool {
            // Over the contiguous bytes (a small string's copied to the stack): no per-byte decoding.
            var value = value
            return value.withUTF8(isPlainHostBytes)
        }

        private static func isPlainHostBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var hostLength = 0
            var port = -1
            var portDigits = 0
            for byte in bytes {
                if port >= 0 {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), portDigits < 5 else { return false }
                    port = port * 10 + Int(byte - UInt8(ascii: "0"))
                    portDigits += 1
                    continue
                }
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                    hostLength += 1
                case UInt8(ascii: ":"):
                    port = 0
                default:
                    return false
                }
            }
            return hostLength > 0 && (port < 0 || (portDigits > 0 && port <= 65_535))
        }

        /// RFC 9110 §7.2: `Host = uri-host [ ":" port ]`: no userinfo, path, space or list.
        private static func isValidHost(_ value: String) -> Bool {
            guard !value.isEmpty else { return false }
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\t"),
                    UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "\\"):
                    return false
                default:
                    if byte < 0x21 || byte == 0x7F { return false }
                }
            }
            guard let parts = split(authority: Substring(value)) else { return false }
            return !parts.host.isEmpty
        }

        /// Whether a request asks to switch protocols (`Upgrade` listed in `Connection`): the decoder
        /// stops parsing after it, so the connection replaces its decoder (RFC 9110 §7.8: a server may
        /// ignore `Upgrade`; the proxy never forwards it).
        static func asksForUpgrade(_ head: HTTPRequestHead) -> Bool {
            guard head.headers.contains(name: "upgrade") else { return false }
            return head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
        }

        /// Puts a fresh request decoder in place of the one that stopped after an `Upgrade` request;
        /// the bytes it had buffered (pipelined requests) go to the new one.
        static func replaceDecoder(in pipeline: ChannelPipeline, maximumHeaderSize: Int) {
            let operations = pipeline.syncOperations
            guard let old = try? operations.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self)
            else { return }
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderListSize = maximumHeaderSize
            limits.maxHeaderFieldSize = maximumHeaderSize
            let fresh = ByteToMessageHandler(
                HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, limitConfiguration: limits))
            do {
                try operations.addHandler(fresh, position: .after(old.handler))
            } catch {
                return
            }
            _ = operations.removeHandler(context: old)
        }
    }
#endif
#if Serve
    import NIOCore

    /// Refuses an HTTP/0.9 request at the start of a connection with `400` and a close.
    ///
    /// RFC 9112 §2.3: a request line without an HTTP version is HTTP/0.9, which the HTTP/1.1 decoder
    /// would leave waiting for a header section that never comes. The guard looks at the first line
    /// only, then leaves the pipeline.
    final class VersionlessRequestGuard: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        private var pending: ByteBuffer?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if var pending {
                pending.writeBuffer(&bytes)
                bytes = pending
            }
            let view = bytes.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                // Not a line yet: keep it, unless it is already longer than any request line should be.
                if bytes.readableBytes < 8192 {
                    pending = bytes
                    return
                }
                pass(bytes, context: context)
                return
            }
            var line = view[view.startIndex..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let words = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            if !line.isEmpty, words.count == 2 {
                pending = nil
                let text = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                let written = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(NIOAny(ByteBuffer(string: text)), promise: written)
                let channel = context.channel
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return
            }
            pass(bytes, context: context)
        }

        private func pass(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
            pending = nil
            context.fireChannelRead(wrapInboundOut(bytes))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
#endif
