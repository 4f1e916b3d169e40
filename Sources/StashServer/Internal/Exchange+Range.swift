#if Serve
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    extension Exchange {
        /// Answers a `GET` with `Range` that nothing fresh answers from the whole response.
        ///
        /// RFC 9111 §3.4: the whole response is fetched once (the caller coalesces misses of the
        /// URL) and stored, and the range is cut from it as its bytes arrive: when the origin
        /// announces the length, the answer (`206`, or `416`) goes out as soon as the range's bytes
        /// are in, and the rest of the body is still read and stored; the caller keeps other
        /// requests for the URL waiting until it is. Without a length, the range is cut once the
        /// whole body is in. A `200` longer than ``ServeOptions/rangeFetchLimit``, or that may not be
        /// stored, is dropped and the client's range is passed through; any other status is relayed
        /// as it is.
        mutating func forwardForRange(stored: ResponseStore.Found?, base: String) async throws {
            let request = OriginRequest.make(
                head: head, client: writer.record.client, stored: stored?.response, context: context,
                wholeResponse: true)
            guard let answer = try await askOrigin(request, stored: stored) else { return }
            let (response, status, responseHeaders) = (answer.response, answer.status, answer.headers)
            if let stored, status == 304 {
                try await serveRevalidated(stored, base: base, notModified: answer)
                return
            }
            let storable =
                status == 200
                ? ServePolicy.storableHeaders(
                    method: head.method, requestHeaders: head.headers, status: status,
                    responseHeaders: responseHeaders) : nil
            let announced = responseHeaders.first(name: "content-length").flatMap { Int($0) }
            let limit = min(context.options.rangeFetchLimit, context.maximumStoredBody)
            if status == 200, storable == nil || (announced ?? 0) > limit {
                // Not worth storing whole: the client's own range, passed through (a `206` answer
                // is kept as partial content, RFC 9111 §3.3).
                _ = response
                try await forward(stored: nil, base: nil, partialBase: base)
                return
            }
            writer.record.cacheStatus = stored == nil ? .miss : .expired
            if status == 206 {
                // An origin that answered with a range all the same: a piece of partial content.
                try await relayPartial(answer, base: base)
                return
            }
            guard let storable else {
                var clientHeaders = responseHeaders
                ProxyHeaders.addVia(to: &clientHeaders, version: head.version)
                try await writer.head(status: status, headers: clientHeaders)
                for try await chunk in response.body { try await writer.body(chunk) }
                await writer.end()
                return
            }
            var headers = storable
            headers.remove(name: "content-length")
            var cutter: RangeAnswer.Cutter?
            if let announced {
                headers.add(name: "Content-Length", value: String(announced))
                cutter = try await startRangeAnswer(
                    fetched: cachedResponse(answer, headers: headers, body: nil), base: base)
            }
            let spool = BodySpool(memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory)
            var complete = true
            do {
                for try await chunk in response.body {
                    if complete { complete = spool.append(chunk, limit: limit) }
                    if var answering = cutter {
                        cutter = try await sendRangeBytes(of: chunk, with: &answering) ? nil : answering
                    }
                    if !complete, cutter == nil { break }  // nothing left to store or to send
                }
            } catch {
                spool.discard()
                throw error
            }
            guard complete, ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders) else {
                spool.discard()
                if writer.hasEnded { return }
                // A range answer under way whose bytes never came: the origin's body fell short.
                if writer.record.headSent { throw ServeFailure.originBodyTruncated }
                try await forward(stored: nil, base: nil, partialBase: base)
                return
            }
            spool.close()
            headers.remove(name: "content-length")
            headers.add(name: "Content-Length", value: String(spool.length))
            if !writer.hasEnded {
                let fetched = ResponseStore.Found(
                    response: cachedResponse(answer, headers: headers, body: spool.buffer, length: spool.length),
                    tier: .memory, key: base, file: spool.file)
                do {
                    try await serve(fetched, status: writer.record.cacheStatus)
                } catch {
                    await store(
                        spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                        requestTime: answer.requestTime, responseTime: answer.responseTime)
                    throw error
                }
            }
            await store(
                spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                requestTime: answer.requestTime, responseTime: answer.responseTime)
        }

        private func cachedResponse(
            _ answer: OriginAnswer, headers: HTTPHeaders, body: ByteBuffer?, length: Int? = nil
        ) -> CachedResponse {
            CachedResponse(
                status: answer.status, headers: headers, varyValues: [:], requestTime: answer.requestTime,
                responseTime: answer.responseTime, body: body,
                bodyLength: length ?? headers.first(name: "content-length").flatMap { Int($0) } ?? 0)
        }

        /// Sends the head of the answer to `fetched`, a response of known length whose body is on
        /// its way: its ranges (or the whole response, when the `Range` does not apply) when they can
        /// be cut in one pass over the body.
        ///
        /// A client whose own precondition the response meets gets its `304` at once (RFC 9110
        /// §13.2.2: `If-None-Match` and `If-Modified-Since` are evaluated before `Range`).
        ///
        /// - Returns: What cuts the answer's bytes from the body's chunks; `nil` when the answer
        ///   waits for the whole body, or was sent whole (`304`, `416`).
        private mutating func startRangeAnswer(fetched: CachedResponse, base: String) async throws
            -> RangeAnswer.Cutter?
        {
            if ConditionalRequest.isNotModified(method: head.method, requestHeaders: head.headers, stored: fetched) {
                try await serve(
                    ResponseStore.Found(response: fetched, tier: .memory, key: base), status: writer.record.cacheStatus)
                return nil
            }
            let outcome = RangeRequest.evaluate(method: head.method, requestHeaders: head.headers, stored: fetched)
            let headers = servedHeaders(fetched)
            let answer =
                RangeAnswer(outcome, headers: headers, length: fetched.bodyLength)
                ?? RangeAnswer.whole(headers: headers, length: fetched.bodyLength)
            guard answer.isInBodyOrder else { return nil }
            writer.record.tier = .memory
            try await writer.head(status: answer.status, headers: answer.headers)
            var cutter = RangeAnswer.Cutter(answer)
            if try await sendRangeBytes(of: ByteBuffer(), with: &cutter) { return nil }
            return cutter
        }

        /// Sends the bytes of the range answer that `chunk`, the next chunk of the body, holds.
        ///
        /// Ends the answer when it is complete. A client that went away gets its connection closed, and
        /// the body is still read and stored.
        ///
        /// - Returns: Whether the answer is over (sent whole, or its client gone).
        private mutating func sendRangeBytes(of chunk: ByteBuffer, with cutter: inout RangeAnswer.Cutter) async throws
            -> Bool
        {
            do {
                for bytes in cutter.cut(chunk) { try await writer.body(bytes) }
            } catch {
                context.logger.debug("\(head.method) \(head.uri): the client left during its range (\(error))")
                await writer.fail(status: 502, message: "")
                return true
            }
            guard cutter.isComplete else { return false }
            await writer.end()
            return true
        }

        /// `PURGE` on the proxy's own address: carried out for a peer in
        /// ``ServeOptions/purgeAllowList``, refused with `403` for anyone else (and never forwarded).
        mutating func purgeOnProxy() async throws {
            let scope = Purge.scope(of: head.uri)
            let (status, text): (HTTPResponseStatus, String)
            if ServeOptions.contains(context.options.purgeAllowList, writer.record.client) {
                let count = await Purge.run(scope, store: context.store)
                (status, text) = Purge.answer(scope, count: count)
            } else {
                (status, text) = (
                    .forbidden,
                    "stash serve: PURGE is not allowed from \(writer.record.client): use the admin (--metrics) address, or --purge-allow\n"
                )
            }
            if let body { for try await _ in body.sequence {} }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.add(name: "Content-Length", value: String(text.utf8.count))
            try await writer.head(status: Int(status.code), headers: headers)
            try await writer.body(ByteBuffer(string: text))
            await writer.end()
        }
    }
#endif
