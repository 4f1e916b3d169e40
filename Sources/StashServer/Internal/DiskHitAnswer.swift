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

    extension ProxyHandler {
        /// Writes a fresh stored response on the event loop, from the memory tier or from the
        /// direct disk read: its pre-encoded head with its own `Age` (RFC 9111 §4.2.3), then its
        /// body buffer or, for a body left in its disk-tier value file, that file with `sendfile`;
        /// or `304 Not Modified` when the client's own validator matches (RFC 9111 §4.3.2).
        ///
        /// - Parameter entry: The disk-tier entry whose open value file holds the body, when
        ///   `stored` has none in memory: the entry's own file, even if its key was replaced since,
        ///   so the body always belongs to the head read with it.
        /// - Returns: `false`, having written nothing, when this path cannot answer (an HTTP/1.0
        ///   request for a body in a file, or a body that is neither in memory nor in a file).
        func writeFresh(
            _ stored: CachedResponse, entry: DiskCache.Entry?, tier: ResponseStore.Tier, _ head: HTTPRequestHead,
            _ keepAlive: Bool, _ record: inout ExchangeRecord, _ context: ChannelHandlerContext
        ) -> Bool {
            let now = Date()
            if ConditionalRequest.isConditional(head.headers),
                ConditionalRequest.isNotModified(method: head.method, requestHeaders: head.headers, stored: stored)
            {
                var headers = ConditionalRequest.notModifiedHeaders(stored)
                headers.add(name: "Age", value: ServePolicy.ageValue(stored, now: now))
                ProxyHeaders.addVia(to: &headers, version: head.version)
                if !keepAlive { headers.add(name: "Connection", value: "close") }
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers))),
                    promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                record.status = 304
                record.cacheStatus = .hit
                record.tier = tier
                return true
            }
            let sendsBody = head.method != .HEAD && stored.bodyLength > 0
            var file: NIOFileHandle?
            if stored.body == nil, sendsBody {
                // A body in a value file: only HTTP/1.1 (the encoded head), from a descriptor of
                // its own that the write closes.
                guard head.version == .http1_1, let open = entry?.fileDescriptor else { return false }
                let descriptor = dup(open)
                guard descriptor >= 0 else { return false }
                file = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
            } else if stored.body == nil, head.version != .http1_1 {
                return false
            }
            if head.version == .http1_1 {
                var encoded = context.channel.allocator.buffer(capacity: stored.encodedHead.readableBytes + 48)
                encoded.writeImmutableBuffer(stored.encodedHead)
                encoded.writeStaticString("Age: ")
                encoded.writeString(String(ServePolicy.ageSeconds(stored, now: now)))
                encoded.writeStaticString(keepAlive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n")
                activity.writeEncoded(encoded)
                if sendsBody, let body = stored.body {
                    activity.writeEncoded(body)
                    record.bytes = body.readableBytes
                } else if let file {
                    let written = context.eventLoop.makePromise(of: Void.self)
                    written.futureResult.whenComplete { _ in try? file.close() }
                    activity.write(
                        .fileRegion(FileRegion(fileHandle: file, readerIndex: 0, endIndex: stored.bodyLength)),
                        promise: written)
                    record.bytes = stored.bodyLength
                }
                activity.flush()
            } else if let body = stored.body {
                var headers = stored.headers
                headers.replaceOrAdd(name: "Age", value: ServePolicy.ageValue(stored, now: now))
                ProxyHeaders.addVia(to: &headers, version: head.version)
                if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
                let responseHead = HTTPResponseHead(
                    version: .http1_1, status: HTTPResponseStatus(statusCode: stored.status), headers: headers)
                context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
                if sendsBody {
                    context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                    record.bytes = body.readableBytes
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
            record.status = stored.status
            record.cacheStatus = .hit
            record.tier = tier
            return true
        }
    }
#endif
