#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// One request that the memory tier could not answer at once: looked up in the disk and shared
    /// tiers, coalesced with concurrent misses of its URL, forwarded to the origin, and stored when
    /// RFC 9111 lets a shared cache store it.
    struct Exchange: Sendable {
        let head: HTTPRequestHead
        let body: RequestBody?
        let context: ProxyContext
        var writer: ResponseWriter
        /// What the connection's direct disk read found (see ``ProxyHandler``), used by the first
        /// lookup instead of reading the tiers again; `nil`: nothing was read yet.
        var prefetched: ResponseStore.Found?? = nil

        /// Runs the exchange to its end; never throws (a failure is a `502` or a closed connection).
        mutating func run() async {
            do {
                if head.method == .GET || head.method == .HEAD {
                    try await serveCacheable()
                } else if head.method == .PURGE {
                    try await purgeOnProxy()
                } else {
                    try await forward(stored: nil, base: nil)
                }
            } catch {
                await failed(error)
            }
        }

        /// Ends an exchange that failed with `error`: a `504` when the origin did not answer in
        /// time, else a `502` (or a closed connection, once the response has started).
        mutating func failed(_ error: any Error) async {
            context.logger.debug("\(head.method) \(head.uri) failed: \(error)")
            let (status, message) = Self.failure(error, context: context)
            await writer.fail(status: status, message: message)
        }

        /// The status and message of a failed exchange's answer.
        static func failure(_ error: any Error, context: ProxyContext) -> (status: Int, message: String) {
            OriginRequest.isTimeout(error)
                ? (504, "stash serve: the origin did not answer in time")
                : (502, "stash serve: the origin \(context.origin.absoluteString) could not be reached")
        }

        private var onlyIfCached: Bool {
            head.headers[canonicalForm: "cache-control"].contains { $0.lowercased() == "only-if-cached" }
        }

        private mutating func serveCacheable() async throws {
            let base = context.store.baseKey(target: head.uri)
            let hasRange = head.headers.contains(name: "range")
            var waited = false
            var partialLength: Int?
            while true {
                var found = prefetched ?? nil
                if prefetched == nil { found = await context.store.lookUp(base: base, requestHeaders: head.headers) }
                prefetched = nil
                if let found {
                    switch ServePolicy.reuse(
                        method: head.method, requestHeaders: head.headers, stored: found.response, now: Date())
                    {
                    case .fresh, .stale:
                        // .stale: the request accepts a stale response (max-stale, §4.2.4).
                        try await serve(found, status: .hit)
                        return
                    case .revalidate:
                        if ServePolicy.mayServeWhileRevalidating(found.response, requestHeaders: head.headers) {
                            // RFC 5861 §3: served stale now, revalidated once in the background.
                            StaleRevalidation.start(
                                base: base, head: head, client: writer.record.client, context: context)
                            try await serve(found, status: .stale)
                        } else if context.fills.lead(base) {
                            // Its answer is stored in a fill, which an invalidation reaches (§4.4).
                            try await asLeader(of: base) { exchange in
                                try await exchange.revalidate(found, base: base, hasRange: hasRange)
                            }
                        } else {
                            // A fill of the URL is under way (a miss or another revalidation), which
                            // stores what the URL has now: this one revalidates for its client and
                            // stores nothing, so that every store belongs to a fill, which an
                            // invalidation of the URL reaches (§4.4).
                            try await forward(stored: found, base: nil)
                        }
                        return
                    case .onlyIfCachedMiss:
                        try await gatewayTimeout()
                        return
                    case .unusable:
                        break
                    }
                }
                // RFC 9111 §3.3: a range wholly within stored partial content is answered from it.
                if hasRange, head.method == .GET, try await servePartial(base: base, completeLength: &partialLength) {
                    return
                }
                if found == nil, onlyIfCached {
                    try await gatewayTimeout()
                    return
                }
                guard head.method == .GET else { break }
                if waited {
                    // A follower whose leader stored no whole response (it fetched a range, a
                    // response that was not stored, or one its URL's invalidation discarded) leads
                    // the next fill when no other follower does: it completes the URL's partial
                    // content (RFC 9111 §3.3; the leader's fill can end after its client got the
                    // response, so a plain request right after a range request meets it) or fetches
                    // and stores. Else it fetches without storing: every store belongs to a fill,
                    // which an invalidation of the URL reaches (RFC 9111 §4.4).
                    if context.fills.lead(base) {
                        try await asLeader(of: base) { exchange in
                            try await exchange.fill(base: base, hasRange: hasRange, partialLength: partialLength)
                        }
                    } else {
                        try await forward(stored: nil, base: nil)
                    }
                    return
                }
                switch await context.fills.begin(base) {
                case .follower:
                    waited = true
                    continue
                case .leader:
                    try await asLeader(of: base) { exchange in
                        try await exchange.fill(base: base, hasRange: hasRange, partialLength: partialLength)
                    }
                    return
                }
            }
            try await forward(stored: nil, base: base)
        }

        /// Runs `work` as the leader of `base`'s fill, then ends the fill.
        ///
        /// ``FillCoordinator/lead(_:)`` made the caller the leader. The fill's stores go through
        /// ``ProxyContext/storeFetched(base:_:)``, so an invalidation of the URL reaches what it
        /// stores whenever it comes.
        private mutating func asLeader(of base: String, _ work: (inout Exchange) async throws -> Void) async throws {
            defer { context.fills.finish(base) }
            try await work(&self)
        }

        /// Fetches what a request that found nothing usable needs, answers and stores it.
        private mutating func fill(base: String, hasRange: Bool, partialLength: Int?) async throws {
            if hasRange, let partialLength,
                partialLength > min(context.options.rangeFetchLimit, context.maximumStoredBody)
            {
                // Known from its partial content to be too long to fetch whole: the client's range
                // goes to the origin, and its answer adds a piece.
                try await forward(stored: nil, base: nil, partialBase: base)
            } else if hasRange {
                try await forwardForRange(stored: nil, base: base)
            } else {
                let completed = try await completePartial(base: base)
                if !completed { try await forward(stored: nil, base: base) }
            }
        }

        /// Asks the origin to validate `found` (RFC 9111 §4.3.1) for a request it cannot answer
        /// alone, and answers with what comes back.
        private mutating func revalidate(_ found: ResponseStore.Found, base: String, hasRange: Bool) async throws {
            if hasRange, head.method == .GET {
                try await forwardForRange(stored: found, base: base)
            } else {
                try await forward(stored: found, base: base)
            }
        }

        /// Answers from a stored response, with its stored headers and a current `Age` (RFC 9111 §4.2.3),
        /// or with `304 Not Modified` when the request's own preconditions say the client has it
        /// (RFC 9111 §4.3.2).
        mutating func serve(_ found: ResponseStore.Found, status: CacheStatus) async throws {
            writer.record.cacheStatus = status
            writer.record.tier = found.tier
            let response = found.response
            if ConditionalRequest.isNotModified(method: head.method, requestHeaders: head.headers, stored: response) {
                var headers = ConditionalRequest.notModifiedHeaders(response)
                headers.add(name: "Age", value: ServePolicy.ageValue(response, now: Date()))
                ProxyHeaders.addVia(to: &headers, version: head.version)
                try await writer.head(status: 304, headers: headers)
                await writer.end()
                return
            }
            if try await serveRange(found, status: status) { return }
            writer.queueHead(status: response.status, headers: servedHeaders(response))
            if let body = response.body {
                writer.queueBody(body)
            } else if let entry = found.entry {
                try await writer.body(entry: entry, length: response.bodyLength)
            } else if let file = found.file {
                try await writer.body(fileAt: file, length: response.bodyLength)
            }
            await writer.end()
        }

        /// RFC 9111 §5.2.1.7: `only-if-cached` with nothing usable stored.
        private mutating func gatewayTimeout() async throws {
            writer.record.cacheStatus = .onlyIfCached
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            ProxyHeaders.addVia(to: &headers, version: head.version)
            try await writer.head(status: 504, headers: headers)
            await writer.end()
        }

        /// Forwards the request to the origin (conditionally when `stored` is given) and relays,
        /// stores or applies its answer.
        ///
        /// - Parameter partialBase: Where a `206` answer to a `GET` is stored as partial content
        ///   when `base` is `nil` (a range passed through); by default `base`.
        mutating func forward(stored: ResponseStore.Found?, base: String?, partialBase: String? = nil) async throws {
            var request = OriginRequest.make(
                head: head, client: writer.record.client, stored: stored?.response, context: context)
            request.body = body
            try await continueIfExpected()
            guard let answer = try await askOrigin(request, stored: stored) else { return }
            try await relay(answer, stored: stored, base: base, partialBase: partialBase)
        }

        /// Relays, stores or applies the origin's answer to the request (see ``forward(stored:base:partialBase:)``),
        /// after invalidating what an unsafe method invalidates (RFC 9111 §4.4).
        mutating func relay(
            _ answer: OriginAnswer, stored: ResponseStore.Found?, base: String?, partialBase: String? = nil
        ) async throws {
            let (response, status, responseHeaders) = (answer.response, answer.status, answer.headers)
            let (requestTime, responseTime) = (answer.requestTime, answer.responseTime)

            // RFC 9111 §4.4: only an unsafe method invalidates (a GET or HEAD never parses a URL).
            if head.method != .GET, head.method != .HEAD {
                let url = context.originPrefix + (head.uri.hasPrefix("/") ? head.uri : "/" + head.uri)
                for invalid in ServePolicy.invalidatedURLs(
                    method: head.method, url: URL(string: url) ?? context.origin, status: status,
                    responseHeaders: responseHeaders)
                {
                    let invalidBase = context.store.baseKey(target: target(of: invalid))
                    await context.store.invalidate(base: invalidBase)
                    await context.store.removePartial(base: invalidBase)
                    context.partials.withLock { _ = $0.remove(invalidBase) }
                }
            }

            if let stored, status == 304 {
                try await serveRevalidated(stored, base: base, notModified: answer)
                return
            }

            writer.record.cacheStatus = stored == nil ? (base == nil ? .bypass : .miss) : .expired
            if status == 206, head.method == .GET, let partialBase = partialBase ?? base {
                try await relayPartial(answer, base: partialBase)
                return
            }
            var storable: HTTPHeaders? = nil
            if base != nil, status != 206, !head.headers.contains(name: "range") {
                storable = ServePolicy.storableHeaders(
                    method: head.method, requestHeaders: head.headers, status: status,
                    responseHeaders: responseHeaders)
            }
            var clientHeaders = responseHeaders
            ProxyHeaders.addVia(to: &clientHeaders, version: head.version)
            guard let storable, let base else {
                try await writer.head(status: status, headers: clientHeaders)
                for try await chunk in response.body { try await writer.body(chunk) }
                await writer.end()
                return
            }
            // The last chunk is held back until the response is stored, so that a client that has the
            // whole body and asks again finds it in the cache. The head waits for the first chunk:
            // a body that comes whole in it goes out with its head and end in one write.
            let expectedLength = responseHeaders.first(name: "content-length").flatMap { Int($0) }
            writer.deferHead(status: status, headers: clientHeaders)
            let spool = BodySpool(
                memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory,
                expectedLength: expectedLength)
            var complete = true
            var held: ByteBuffer?
            var received = 0
            do {
                for try await chunk in response.body {
                    received += chunk.readableBytes
                    if complete, !spool.append(chunk, limit: context.maximumStoredBody) { complete = false }
                    if let previous = held {
                        try await writer.body(previous)
                    } else if received != expectedLength {
                        try await writer.flushHead()  // more is coming: the client gets the head now
                    }
                    held = chunk
                }
            } catch {
                spool.discard()
                throw error
            }
            if complete, ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders) {
                await store(
                    spool, status: status, storable: storable, responseHeaders: responseHeaders,
                    base: base, requestTime: requestTime, responseTime: responseTime)
            } else {
                spool.discard()
            }
            await writer.end(last: held)
        }

        func store(
            _ spool: BodySpool, status: Int, storable: HTTPHeaders, responseHeaders: HTTPHeaders, base: String,
            requestTime: Date, responseTime: Date
        ) async {
            await Self.store(
                spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                requestHeaders: head.headers, requestTime: requestTime, responseTime: responseTime, context: context)
        }

        /// The response to store for a complete body that `spool` collected (closed by this): the
        /// storable fields with the body's own `Content-Length`, and the body in memory or in the
        /// spool's file.
        static func storedResponse(
            _ spool: BodySpool, status: Int, storable: HTTPHeaders, varyValues: [String: String], requestTime: Date,
            responseTime: Date
        ) -> CachedResponse {
            spool.close()
            var headers = storable
            headers.remove(name: "content-length")
            headers.add(name: "Content-Length", value: String(spool.length))
            return CachedResponse(
                status: status, headers: headers, varyValues: varyValues, requestTime: requestTime,
                responseTime: responseTime, body: spool.buffer, bodyLength: spool.length)
        }

        /// Stores a complete response whose body `spool` collected, under the key its `Vary` and
        /// `requestHeaders` select, unless its URL was invalidated since its fill began
        /// (``ProxyContext/storeFetched(base:_:)``).
        static func store(
            _ spool: BodySpool, status: Int, storable: HTTPHeaders, responseHeaders: HTTPHeaders, base: String,
            requestHeaders: HTTPHeaders, requestTime: Date, responseTime: Date, context: ProxyContext
        ) async {
            let stored = await context.storeFetched(base: base) {
                await storeNow(
                    spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                    requestHeaders: requestHeaders, requestTime: requestTime, responseTime: responseTime,
                    context: context)
            }
            if !stored { spool.discard() }
        }

        private static func storeNow(
            _ spool: BodySpool, status: Int, storable: HTTPHeaders, responseHeaders: HTTPHeaders, base: String,
            requestHeaders: HTTPHeaders, requestTime: Date, responseTime: Date, context: ProxyContext
        ) async {
            let names = ResponseStore.varyNames(responseHeaders)
            var vary: [String: String] = [:]
            for name in names { vary[name] = ResponseStore.fieldValue(name, in: requestHeaders) }
            let key = await context.store.storageKey(
                base: base, requestHeaders: requestHeaders, responseHeaders: responseHeaders)
            let cached = storedResponse(
                spool, status: status, storable: storable, varyValues: vary, requestTime: requestTime,
                responseTime: responseTime)
            if let file = spool.file {
                await context.store.store(cached, key: key, bodyFile: file)
                try? FileManager.default.removeItem(at: file)  // left over only when the store failed
            } else {
                await context.store.store(cached, key: key)
            }
        }

        private func target(of url: URL) -> String {
            let absolute = url.absoluteString
            return absolute.hasPrefix(context.originPrefix)
                ? String(absolute.dropFirst(context.originPrefix.count)) : url.path
        }
    }
#endif
