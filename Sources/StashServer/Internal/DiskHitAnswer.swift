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
        ///   so the body always belongs to the head read with it. Its descriptor is sent as it is
        ///   (no `dup`), and the entry is kept until the write ends.
        /// - Parameter now: The instant the caller judged the response fresh at, that its `Age` is
        ///   computed for.
        /// - Returns: `false`, having written nothing, when this path cannot answer (an HTTP/1.0
        ///   request for a body in a file, or a body that is neither in memory nor in a file).
        func writeFresh(
            _ stored: CachedResponse, entry: DiskCache.Entry?, tier: ResponseStore.Tier, _ head: HTTPRequestHead,
            _ keepAlive: Bool, now: Date, _ record: inout ExchangeRecord, _ context: ChannelHandlerContext
        ) -> Bool {
            let isNotModified =
                ConditionalRequest.isConditional(head.headers)
                && ConditionalRequest.isNotModified(method: head.method, requestHeaders: head.headers, stored: stored)
            let sendsBody = !isNotModified && head.method != .HEAD && stored.bodyLength > 0
            var file: NIOFileHandle?
            if stored.body == nil, sendsBody {
                // A body in a value file: only HTTP/1.1 (the encoded head), from the entry's own
                // descriptor, lent to the write: the handle gives it back unclosed when the write
                // ends, and the entry, kept alive until then, closes it.
                guard head.version == .http1_1, let open = entry?.fileDescriptor else { return false }
                file = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: open)
            } else if !isNotModified, stored.body == nil, head.version != .http1_1 {
                return false
            }
            // Closing the connection fails the writes still pending: the close waits for the last.
            let ended: EventLoopPromise<Void>? = keepAlive ? nil : context.eventLoop.makePromise()
            defer {
                if let ended {
                    let channel = context.channel
                    ended.futureResult.whenComplete { _ in channel.close(promise: nil) }
                }
            }
            if isNotModified {
                // RFC 9111 §4.3.2: the client's own validator matches the fresh stored response.
                var headers = ConditionalRequest.notModifiedHeaders(stored)
                headers.add(name: "Age", value: ServePolicy.ageValue(stored, now: now))
                ProxyHeaders.addVia(to: &headers, version: head.version)
                if !keepAlive { headers.add(name: "Connection", value: "close") }
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .notModified, headers: headers))),
                    promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: ended)
                record.status = 304
                record.cacheStatus = .hit
                record.tier = tier
                return true
            }
            if head.version == .http1_1 {
                var encoded = context.channel.allocator.buffer(capacity: stored.encodedHead.readableBytes + 48)
                encoded.writeImmutableBuffer(stored.encodedHead)
                encoded.writeStaticString("Age: ")
                encoded.writeString(String(ServePolicy.ageSeconds(stored, now: now)))
                encoded.writeStaticString(keepAlive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n")
                if sendsBody, let body = stored.body {
                    activity.writeEncoded(encoded)
                    activity.write(.byteBuffer(body), promise: ended)
                    record.bytes = body.readableBytes
                } else if let file {
                    activity.writeEncoded(encoded)
                    let written = context.eventLoop.makePromise(of: Void.self)
                    written.futureResult.whenComplete { result in
                        _ = try? file.takeDescriptorOwnership()
                        withExtendedLifetime(entry) {}
                        ended?.completeWith(result)
                    }
                    activity.write(
                        .fileRegion(FileRegion(fileHandle: file, readerIndex: 0, endIndex: stored.bodyLength)),
                        promise: written)
                    record.bytes = stored.bodyLength
                } else {
                    activity.write(.byteBuffer(encoded), promise: ended)
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
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: ended)
            }
            record.status = stored.status
            record.cacheStatus = .hit
            record.tier = tier
            return true
        }
    }
#endif
