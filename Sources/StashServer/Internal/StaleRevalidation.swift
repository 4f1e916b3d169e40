#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// RFC 5861 §3 `stale-while-revalidate`: a stale response inside its window is served at once,
    /// and one revalidation per URL runs in the background, freshening or replacing the stored
    /// response for the requests that follow.
    enum StaleRevalidation {
        /// Starts the background revalidation of what `base` has stored for the request `head`,
        /// unless a fill of `base` (a miss, or another revalidation) is under way.
        ///
        /// The revalidation leads a fill of `base`, so that what it stores is stored in a fill, which
        /// an invalidation of the URL reaches (RFC 9111 §4.4, ``ProxyContext/storeFetched(base:_:)``).
        static func start(base: String, head: HTTPRequestHead, client: String, context: ProxyContext) {
            guard context.fills.lead(base) else { return }
            Task {
                // The request found the stale response before it led: another revalidation may
                // have stored its answer in between (it is then fresh, revalidated once, not
                // again), or an invalidation removed it (the next request fetches).
                if let current = await context.store.lookUp(base: base, requestHeaders: head.headers),
                    ServePolicy.reuse(requestHeaders: head.headers, stored: current.response, now: Date()) != .fresh
                {
                    await revalidate(current, base: base, head: head, client: client, context: context)
                }
                context.fills.finish(base)
            }
        }

        private static func revalidate(
            _ found: ResponseStore.Found, base: String, head: HTTPRequestHead, client: String, context: ProxyContext
        ) async {
            var head = head
            head.method = .GET
            let request = OriginRequest.make(
                head: head, client: client, stored: found.response, context: context, wholeResponse: true)
            let requestTime = Date()
            do {
                let response = try await context.client.execute(request, deadline: .now() + context.originTimeout)
                let responseTime = Date()
                let status = response.status
                let responseHeaders = ProxyHeaders.endToEnd(response.headers)
                if status == 304 {
                    for try await _ in response.body {}
                    let headers = ServePolicy.headersAfterNotModified(
                        stored: found.response.headers, notModified: responseHeaders)
                    let updated = found.response.updating(
                        headers: headers, requestTime: requestTime, responseTime: responseTime)
                    await context.storeFetched(base: base) { await context.store.update(updated, key: found.key) }
                    return
                }
                guard
                    let storable = ServePolicy.storableHeaders(
                        method: .GET, requestHeaders: head.headers, status: status, responseHeaders: responseHeaders)
                else {
                    for try await _ in response.body {}
                    // RFC 9111 §4.3.3: a full response that may not be stored still replaces the old one.
                    if (200..<500).contains(status) { await context.store.invalidate(base: base) }
                    return
                }
                let spool = BodySpool(memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory)
                var complete = true
                do {
                    for try await chunk in response.body where complete {
                        complete = spool.append(chunk, limit: context.maximumStoredBody)
                    }
                } catch {
                    spool.discard()
                    throw error
                }
                guard complete, ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders)
                else {
                    spool.discard()
                    return
                }
                await Exchange.store(
                    spool, status: status, storable: storable, responseHeaders: responseHeaders, base: base,
                    requestHeaders: head.headers, requestTime: requestTime, responseTime: responseTime,
                    context: context)
            } catch {
                context.logger.debug("background revalidation of \(head.uri) failed: \(error)")
            }
        }
    }
#endif
