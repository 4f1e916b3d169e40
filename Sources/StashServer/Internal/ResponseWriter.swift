#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Writes one response to a client connection from a task off the event loop, waiting for a
    /// body chunk to reach the socket before the next whenever the connection's outbound buffer is
    /// full: a slow client slows the origin read down instead of making the proxy buffer the body.
    struct ResponseWriter: Sendable {
        let channel: any Channel
        let completion: @Sendable (ExchangeRecord) -> Void
        /// Whether the connection stays open after this response.
        let keepAlive: Bool
        let isHead: Bool
        var record: ExchangeRecord
        /// Whether ``end()`` ran: the connection has moved on to its next request (or closed), and
        /// nothing more may be written for this one.
        private(set) var hasEnded = false
        /// A head that ``deferHead(status:headers:)`` kept back: it goes out with the next part,
        /// in the same trip to the event loop and the same write to the socket.
        private(set) var pendingHead: HTTPResponseHead? = nil

        /// Sends an interim (1xx) response ahead of the final one, to a client that can take it.
        ///
        /// RFC 9110 §15.2: a server must not send a 1xx to an HTTP/1.0 client, so for one this
        /// sends nothing. An interim response is never the answer: the final head follows.
        ///
        /// - Returns: Whether it was sent.
        @discardableResult
        mutating func informational(
            status: Int, headers: HTTPHeaders = HTTPHeaders(), requestVersion: HTTPVersion
        ) async throws -> Bool {
            precondition((100..<200).contains(status) && status != 101, "not an interim status: \(status)")
            guard !record.headSent, !hasEnded, requestVersion.major > 1 || requestVersion.minor >= 1 else {
                return false
            }
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            try await channel.writeAndFlush(HTTPServerResponsePart.head(head))
            return true
        }

        /// Sends the response head (see ``send(_:)``).
        mutating func head(status: Int, headers: HTTPHeaders) async throws {
            var headers = headers
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            record.status = status
            let head = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
            record.headSent = true
            try await send(.head(head))
        }

        /// Writes and flushes a part; waits for the socket to take it only while the connection
        /// is not writable (its outbound buffer is above NIO's high-water mark).
        ///
        /// The wait is back-pressure: a slow client slows the origin read down instead of making
        /// the proxy buffer the body. While the client keeps up, waiting for each part costs a
        /// trip to the event loop and back per part and adds nothing; the parts are written in the
        /// order they are sent, and a failed write fails the ones after it and ``end()``.
        private mutating func send(_ part: HTTPServerResponsePart) async throws {
            let channel = channel
            let head = pendingHead
            pendingHead = nil
            if channel.isWritable {
                guard channel.isActive else { throw ChannelError.ioOnClosedChannel }
                if let head {
                    channel.eventLoop.execute {
                        channel.write(HTTPServerResponsePart.head(head), promise: nil)
                        channel.writeAndFlush(part, promise: nil)
                    }
                } else {
                    channel.writeAndFlush(part, promise: nil)
                }
                return
            }
            if let head { channel.write(HTTPServerResponsePart.head(head), promise: nil) }
            try await channel.writeAndFlush(part)
        }

        /// Keeps the response head back until the first body part or the end.
        ///
        /// The head then goes out with that part: a response whose body comes whole costs one trip
        /// to the event loop and one write, not two. ``flushHead()`` sends it at once (a body that
        /// keeps coming must not keep the client waiting for its head).
        mutating func deferHead(status: Int, headers: HTTPHeaders) {
            var headers = headers
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            record.status = status
            record.headSent = true
            pendingHead = HTTPResponseHead(
                version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        }

        /// Sends a head kept back by ``deferHead(status:headers:)``, if any.
        mutating func flushHead() async throws {
            guard let head = pendingHead else { return }
            pendingHead = nil
            try await send(.head(head))
        }

        /// Queues the response head without waiting: the write that follows (a body part, or
        /// ``end()``) flushes it, so that a stored response costs one wait, not one per part.
        mutating func queueHead(status: Int, headers: HTTPHeaders) {
            var headers = headers
            if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
            record.status = status
            record.headSent = true
            channel.write(
                HTTPServerResponsePart.head(
                    HTTPResponseHead(
                        version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)),
                promise: nil)
        }

        /// Queues a body part that is already in memory without waiting (see ``queueHead(status:headers:)``).
        mutating func queueBody(_ buffer: ByteBuffer) {
            guard !isHead, buffer.readableBytes > 0 else { return }
            record.bytes += buffer.readableBytes
            channel.write(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }

        /// Sends `length` bytes from `offset` of a disk-tier entry's open value file with `sendfile`:
        /// the file the entry was read from, even if the key was overwritten since; only those bytes
        /// are read, however large the file.
        mutating func body(entry: DiskCache.Entry, offset: Int = 0, length: Int) async throws {
            guard !isHead, length > 0, let open = entry.fileDescriptor else { return }
            try await send(descriptor: dup(open), offset: offset, length: length)
        }

        /// Sends a part of the body; waits until the socket took it while the client reads slower
        /// than the parts come (see ``send(_:)``).
        mutating func body(_ buffer: ByteBuffer) async throws {
            guard !isHead, buffer.readableBytes > 0 else { return }
            record.bytes += buffer.readableBytes
            try await send(.body(.byteBuffer(buffer)))
        }

        /// Sends `length` bytes from `offset` of the file at `url` with `sendfile`: only those bytes
        /// are read, however large the file.
        mutating func body(fileAt url: URL, offset: Int = 0, length: Int) async throws {
            guard !isHead, length > 0 else { return }
            try await send(descriptor: open(url.path, O_RDONLY | O_CLOEXEC), offset: offset, length: length)
        }

        /// Sends `length` bytes from `offset` of `descriptor`, which it owns and closes (`-1`: the
        /// stored file is gone).
        private mutating func send(descriptor: Int32, offset: Int, length: Int) async throws {
            guard descriptor >= 0 else { throw ServeFailure.storedFileVanished }
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
            record.bytes += length
            let region = FileRegion(fileHandle: handle, readerIndex: offset, endIndex: offset + length)
            if let head = pendingHead {
                pendingHead = nil
                channel.write(HTTPServerResponsePart.head(head), promise: nil)
            }
            do {
                try await channel.writeAndFlush(HTTPServerResponsePart.body(.fileRegion(region)))
            } catch {
                try? handle.close()
                throw error
            }
            try handle.close()
        }

        /// Ends the response; the connection then serves its next request or closes.
        ///
        /// Does not wait for the end to reach the socket: the connection's event loop writes it
        /// after the parts before it and then, once written, hands the connection on (or closes
        /// it), so the exchange's task costs no trip to the loop and back. The task has nothing
        /// left to do with the response after its end.
        ///
        /// - Parameter last: The body's last part, written with the end in the same trip to the
        ///   loop (it needs no wait for the socket: nothing follows it).
        mutating func end(last: ByteBuffer? = nil) async {
            guard !hasEnded else { return }
            hasEnded = true
            let lastPart: ByteBuffer?
            if let part = last, !isHead, part.readableBytes > 0 {
                record.bytes += part.readableBytes
                lastPart = part
            } else {
                lastPart = nil
            }
            let head = pendingHead
            pendingHead = nil
            let (channel, keepAlive, completion, record) = (channel, keepAlive, completion, record)
            channel.eventLoop.execute {
                if let head { channel.write(HTTPServerResponsePart.head(head), promise: nil) }
                if let lastPart { channel.write(HTTPServerResponsePart.body(.byteBuffer(lastPart)), promise: nil) }
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { result in
                    if case .failure = result { channel.close(promise: nil) }
                    if !keepAlive { channel.close(promise: nil) }
                    completion(record)
                }
            }
        }

        /// Ends an exchange that failed: a `502` when nothing was sent yet (a head kept back by
        /// ``deferHead(status:headers:)`` was not), else the connection is closed (a truncated
        /// body must not look complete).
        mutating func fail(status: Int, message: String) async {
            // After the end the connection belongs to its next request: nothing to close or report.
            guard !hasEnded else { return }
            if !record.headSent || pendingHead != nil {
                pendingHead = nil  // kept back, never sent: the client gets the failure instead
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
                headers.add(name: "Content-Length", value: String(message.utf8.count + 1))
                do {
                    try await head(status: status, headers: headers)
                    try await body(ByteBuffer(string: message + "\n"))
                } catch {}
                await end()
                return
            }
            record.status = record.status ?? status
            hasEnded = true
            channel.close(promise: nil)
            completion(record)
        }
    }

    /// Failures of an exchange that the proxy reports itself.
    enum ServeFailure: Error {
        case storedFileVanished
        /// The origin's body ended before the length it announced.
        case originBodyTruncated
        /// The origin's last response was an interim (1xx) one: `101` to a request without `Upgrade`.
        case interimAsFinal(Int)
    }
#endif
