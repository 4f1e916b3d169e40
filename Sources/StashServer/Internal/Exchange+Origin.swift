#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    extension Exchange {
        /// The origin's final answer to a request: its head, with the times RFC 9111 §4.2.3 needs.
        ///
        /// Only a final response ever gets here: interim (1xx) responses are relayed to the client
        /// as they arrive (see ``askOrigin(_:stored:)``) and never kept, so neither an interim status
        /// nor an interim response's fields can be stored or served as the answer (RFC 9110 §15.2,
        /// RFC 9111 §3).
        struct OriginAnswer {
            let response: OriginResponse
            let status: Int
            /// The response's end-to-end fields (RFC 9110 §7.6.1).
            let headers: HTTPHeaders
            let requestTime: Date
            let responseTime: Date
        }

        /// Sends `request` to the origin, or answers from `stored` when the origin cannot help and
        /// the stored response may stand in.
        ///
        /// RFC 5861 §4: an origin that cannot be reached, or answers `500`, `502`, `503` or `504`, is an
        /// error that a stale response with `stale-if-error` covers; RFC 9111 §4.2.4: being
        /// disconnected from the origin (refused, reset, closed) is covered unless a directive forbids
        /// serving stale.
        ///
        /// Each interim (1xx) response the origin sends before its final one is relayed to the client
        /// at once (RFC 9110 §15.2: a proxy forwards 1xx responses), without its hop-by-hop fields and
        /// with the proxy's `Via`; never to an HTTP/1.0 client (§15.2), and not the origin's
        /// `100 (Continue)` when the proxy already sent its own (see ``continueIfExpected()``).
        ///
        /// - Returns: The origin's answer, or `nil` when the exchange was answered from `stored`.
        mutating func askOrigin(_ request: OriginRequest.Message, stored: ResponseStore.Found?) async throws
            -> OriginAnswer?
        {
            let requestTime = Date()
            let response: OriginResponse
            var relay = writer
            let version = head.version
            let continued = body != nil && OriginRequest.expectsContinue(head)
            do {
                response = try await context.client.execute(request, deadline: .now() + context.originTimeout) {
                    interim in
                    let status = Int(interim.status.code)
                    if status == 100, continued { return }
                    var headers = ProxyHeaders.endToEnd(interim.headers)
                    ProxyHeaders.addVia(to: &headers, version: version)
                    // A client that left fails the final response's write too.
                    _ = try? await relay.informational(status: status, headers: headers, requestVersion: version)
                }
                // The origin client passes `101 (Switching Protocols)` on as if it were final. The proxy
                // never forwards `Upgrade`, so an origin that switches protocols answered a request
                // nobody made (RFC 9110 §15.2.2, §7.8): a bad gateway, never relayed or stored.
                if (100..<200).contains(response.status) {
                    throw ServeFailure.interimAsFinal(response.status)
                }
            } catch {
                guard let stored,
                    ServePolicy.mayServeStaleOnError(stored.response, requestHeaders: head.headers)
                        || (OriginRequest.isDisconnection(error)
                            && ServePolicy.mayServeStaleWhenDisconnected(stored.response, requestHeaders: head.headers))
                else { throw error }
                context.logger.debug("\(head.method) \(head.uri): origin failed (\(error)), serving stale")
                try await serve(stored, status: .stale)
                return nil
            }
            let status = response.status
            if let stored, [500, 502, 503, 504].contains(status),
                ServePolicy.mayServeStaleOnError(stored.response, requestHeaders: head.headers)
            {
                // The origin's 5xx is replaced by the stale response; its body is dropped.
                for try await _ in response.body {}
                try await serve(stored, status: .stale)
                return nil
            }
            return OriginAnswer(
                response: response, status: status, headers: ProxyHeaders.endToEnd(response.headers),
                requestTime: requestTime, responseTime: Date())
        }

        /// RFC 9111 §4.3.4: freshens `stored` with the fields of the origin's `304` and serves it.
        ///
        /// The stored response is left as it is when `base` is `nil` (a revalidation that leads no
        /// fill) or was invalidated since the fill this revalidation leads began
        /// (``ProxyContext/storeFetched(base:_:)``).
        mutating func serveRevalidated(_ stored: ResponseStore.Found, base: String?, notModified answer: OriginAnswer)
            async throws
        {
            let headers = ServePolicy.headersAfterNotModified(
                stored: stored.response.headers, notModified: answer.headers)
            let updated = stored.response.updating(
                headers: headers, requestTime: answer.requestTime, responseTime: answer.responseTime)
            if let base {
                await context.storeFetched(base: base) { await context.store.update(updated, key: stored.key) }
            }
            var found = stored
            found.response = updated
            try await serve(found, status: .revalidated)
        }

        /// A stored response's fields as they are served: with its current `Age` (RFC 9111 §4.2.3)
        /// and the proxy's `Via` (RFC 9110 §7.6.3), for the whole response and for a range of it.
        func servedHeaders(_ response: CachedResponse) -> HTTPHeaders {
            var headers = response.headers
            headers.replaceOrAdd(name: "Age", value: ServePolicy.ageValue(response, now: Date()))
            ProxyHeaders.addVia(to: &headers, version: head.version)
            return headers
        }

        /// Sends `100 (Continue)` to a client that waits for it before sending its content.
        ///
        /// RFC 9110 §10.1.1: a client that sent `Expect: 100-continue` with content may wait for a
        /// `100 (Continue)` before sending it. The proxy sends one as it starts forwarding the content
        /// (an `https` origin's own `100` never reaches it, and a plain one's may come only once the
        /// origin reads), and then does not relay the origin's; never to an HTTP/1.0 client, whose
        /// expectation is ignored (§10.1.1, §15.2).
        mutating func continueIfExpected() async throws {
            guard body != nil, OriginRequest.expectsContinue(head) else { return }
            try await writer.informational(status: 100, requestVersion: head.version)
        }
    }
#endif
