#if Serve
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    extension Exchange {
        /// Answers a `GET` with `Range` that nothing fresh answers from the whole response.
        ///
        /// RFC 9111 §3.4: the whole response is fetched once (the caller coalesces misses of the
        /// URL), stored, and the range is cut from it. A `200` that is longer than ``ServeOptions/rangeFetchLimit`` or that may not be stored
        /// is dropped and the client's range is passed through; any other status is relayed as it is.
        mutating func forwardForRange(stored: ResponseStore.Found?, base: String) async throws {
            let request = OriginRequest.make(
                head: head, client: writer.record.client, stored: stored?.response, context: context,
                wholeResponse: true)
            let requestTime = Date()
            let response: HTTPClientResponse
            do {
                response = try await context.client.execute(request, deadline: .now() + context.originTimeout)
            } catch {
                guard let stored,
                    ServePolicy.mayServeStaleOnError(stored.response, requestHeaders: head.headers)
                        || (OriginRequest.isDisconnection(error)
                            && ServePolicy.mayServeStaleWhenDisconnected(stored.response, requestHeaders: head.headers))
                else { throw error }
                try await serve(stored, status: .stale)
                return
            }
            let responseTime = Date()
            let status = Int(response.status.code)
            let responseHeaders = ProxyHeaders.endToEnd(response.headers)
            if let stored, [500, 502, 503, 504].contains(status),
                ServePolicy.mayServeStaleOnError(stored.response, requestHeaders: head.headers)
            {
                for try await _ in response.body {}
                try await serve(stored, status: .stale)
                return
            }
            if let stored, status == 304 {
                let headers = ServePolicy.headersAfterNotModified(
                    stored: stored.response.headers, notModified: responseHeaders)
                let updated = stored.response.updating(
                    headers: headers, requestTime: requestTime, responseTime: responseTime)
                await context.store.update(updated, key: stored.key)
                try await serve(
                    ResponseStore.Found(response: updated, tier: stored.tier, key: stored.key, file: stored.file),
                    status: .revalidated)
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
                // Not worth storing whole: the client's own range, passed through.
                _ = response
                try await forward(stored: nil, base: nil)
                return
            }
            writer.record.cacheStatus = stored == nil ? .miss : .expired
            guard let storable else {
                var clientHeaders = responseHeaders
                ProxyHeaders.addVia(to: &clientHeaders, version: head.version)
                try await writer.head(status: status, headers: clientHeaders)
                for try await chunk in response.body { try await writer.body(chunk) }
                await writer.end()
                return
            }
            let spool = BodySpool(memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory)
            var complete = true
            do {
                for try await chunk in response.body where complete {
                    complete = spool.append(chunk, limit: limit)
                }
            } catch {
                spool.discard()
                throw error
            }
            guard complete, ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders) else {
                spool.discard()
                try await forward(stored: nil, base: nil)
                return
            }
            spool.close()
            var headers = storable
            headers.remove(name: "content-length")
            headers.add(name: "Content-Length", value: String(spool.length))
            let fetched = CachedResponse(
                status: status, headers: headers, varyValues: [:], requestTime: requestTime,
                responseTime: responseTime, body: spool.buffer, bodyLength: spool.length)
            let found = ResponseStore.Found(response: fetched, tier: .memory, key: base, file: spool.file)
            do {
                if !(try await serveRange(found, status: writer.record.cacheStatus)) {
                    try await serve(found, status: writer.record.cacheStatus)
                }
            } catch {
                await store(
                    spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                    requestTime: requestTime, responseTime: responseTime)
                throw error
            }
            await store(
                spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                requestTime: requestTime, responseTime: responseTime)
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
