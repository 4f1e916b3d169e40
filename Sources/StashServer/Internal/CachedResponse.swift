#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash
    import StashHTTP

    /// A response the proxy stored: its status, end-to-end headers and body, with the times RFC 9111
    /// §4.2.3 computes its age from.
    ///
    /// Immutable and shared between connections: a memory-tier hit writes ``body`` as it is (a
    /// `ByteBuffer` is reference-counted, so no byte is copied per request).
    final class CachedResponse: Sendable {
        /// The stored status code.
        let status: Int
        /// The stored end-to-end header fields, in their order (no `Age`, no hop-by-hop fields).
        let headers: HTTPHeaders
        /// The values the request had for the response's `Vary` fields, lower-cased names.
        let varyValues: [String: String]
        /// When the request that fetched it was sent (RFC 9111 §4.2.3 `request_time`).
        let requestTime: Date
        /// When its response was received (RFC 9111 §4.2.3 `response_time`).
        let responseTime: Date
        /// The body, when it is held in memory; `nil` for a body that lives in a disk-tier file.
        let body: ByteBuffer?
        /// The body's length in bytes.
        let bodyLength: Int
        /// The response as ``ServePolicy`` judges it.
        let stored: StoredResponse
        /// Until when a request without cache directives of its own may take it as fresh; `nil`
        /// when such a request must always go through the full policy.
        let plainFreshUntil: Date?
        /// The policy's current age at ``responseTime`` (RFC 9111 §4.2.3 `corrected_initial_age`):
        /// the age at any later instant is this plus the time since.
        let initialAge: Duration
        /// ``headers`` as an HTTP/1.1 client gets them, but for `Age`: `Via` added, the stored `Age`
        /// removed (each response gets its own).
        let servedHeaders: HTTPHeaders
        /// The status line and ``servedHeaders`` in HTTP/1.1, encoded once: a memory-tier hit writes
        /// them with only its own `Age` (and `Connection: close`) and the blank line after them.
        let encodedHead: ByteBuffer
        /// What the response costs the memory tier: the body's buffer, the encoded head, and the
        /// fields kept three times over (``headers``, ``servedHeaders``, ``stored``), each field
        /// as two strings and an element, plus the objects around them.
        let memoryCost: Int

        init(
            status: Int, headers: HTTPHeaders, varyValues: [String: String], requestTime: Date, responseTime: Date,
            body: ByteBuffer?, bodyLength: Int
        ) {
            self.status = status
            self.headers = headers
            self.varyValues = varyValues
            self.requestTime = requestTime
            self.responseTime = responseTime
            self.body = body
            self.bodyLength = bodyLength
            self.stored = StoredResponse(
                method: "GET", status: status, headers: ServePolicy.fields(headers), requestTime: requestTime,
                responseTime: responseTime,
                varyingRequestHeaders: HTTPFields(varyValues.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
            self.plainFreshUntil = ServePolicy.plainFreshUntil(stored)
            self.initialAge = ServePolicy.policy.currentAge(of: stored, now: responseTime)
            var served = headers
            served.remove(name: "age")
            ProxyHeaders.addVia(to: &served, version: .http1_1)
            self.servedHeaders = served
            var encoded = ByteBufferAllocator().buffer(capacity: 512)
            ResponseEncoder.encodeHead(status: HTTPResponseStatus(statusCode: status), headers: served, into: &encoded)
            self.encodedHead = encoded
            var fieldBytes = 0
            for (name, value) in headers { fieldBytes += name.utf8.count + value.utf8.count + Self.perFieldCost }
            for (name, value) in varyValues { fieldBytes += name.utf8.count + value.utf8.count + Self.perFieldCost }
            self.memoryCost = (body?.capacity ?? 0) + encoded.capacity + 3 * fieldBytes + Self.fixedCost
        }

        /// One field's overhead beyond its bytes: two string allocations (malloc rounds each to
        /// 16 bytes, with a 32-byte header) and its element in the array or `HTTPFields`.
        static let perFieldCost = 96
        /// The objects every stored response has: this one, the `StoredResponse`, the arrays and
        /// dictionary, the memory tier's key and entry, with malloc's overhead.
        static let fixedCost = 1024

        /// The same response with other headers and times, as a `304 Not Modified` leaves it (§4.3.4).
        func updating(headers: HTTPHeaders, requestTime: Date, responseTime: Date) -> CachedResponse {
            CachedResponse(
                status: status, headers: headers, varyValues: varyValues, requestTime: requestTime,
                responseTime: responseTime, body: body, bodyLength: bodyLength)
        }

        /// The same response holding `body` in memory.
        ///
        /// Everything derived from the head (the policy's view, the freshness, the encoded head) is
        /// shared with this one, not computed again: a disk hit with a kept head (see
        /// ``DiskHeads``) pays for no decoding.
        func holding(_ body: ByteBuffer) -> CachedResponse {
            CachedResponse(sameHeadAs: self, body: body)
        }

        private init(sameHeadAs head: CachedResponse, body: ByteBuffer) {
            self.status = head.status
            self.headers = head.headers
            self.varyValues = head.varyValues
            self.requestTime = head.requestTime
            self.responseTime = head.responseTime
            self.body = body
            self.bodyLength = body.readableBytes
            self.stored = head.stored
            self.plainFreshUntil = head.plainFreshUntil
            self.initialAge = head.initialAge
            self.servedHeaders = head.servedHeaders
            self.encodedHead = head.encodedHead
            self.memoryCost = head.memoryCost - (head.body?.capacity ?? 0) + body.capacity
        }

        // MARK: - Disk and shared metadata

        private enum Field {
            static let status = "serve.status"
            static let headers = "serve.headers"
            static let vary = "serve.vary"
            static let requestTime = "serve.request-time"
            static let responseTime = "serve.response-time"
        }

        /// The metadata that carries everything but the body into the disk and shared tiers.
        var metadata: DiskCache.Metadata {
            let headerText = FieldListCoding.encode(pairs: headers.lazy.map { ($0.name, $0.value) })
            let varyText = FieldListCoding.encode(dictionary: varyValues)
            return DiskCache.Metadata(
                contentType: headers.first(name: "content-type"), etag: headers.first(name: "etag"),
                lastModified: headers.first(name: "last-modified"),
                extra: [
                    Field.status: String(status), Field.headers: headerText, Field.vary: varyText,
                    Field.requestTime: String(requestTime.timeIntervalSince1970),
                    Field.responseTime: String(responseTime.timeIntervalSince1970),
                ])
        }

        /// Rebuilds a response from tier metadata, or `nil` when the metadata is not the proxy's.
        convenience init?(metadata: DiskCache.Metadata, body: ByteBuffer?, bodyLength: Int) {
            let extra = metadata.extra
            guard let status = extra[Field.status].flatMap({ Int($0) }),
                let pairs = extra[Field.headers].flatMap(FieldListCoding.decodePairs),
                let requestTime = extra[Field.requestTime].flatMap({ Double($0) }),
                let responseTime = extra[Field.responseTime].flatMap({ Double($0) })
            else { return nil }
            let vary = extra[Field.vary].flatMap(FieldListCoding.decodeDictionary) ?? [:]
            var headers = HTTPHeaders()
            for pair in pairs where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
            self.init(
                status: status, headers: headers, varyValues: vary,
                requestTime: Date(timeIntervalSince1970: requestTime),
                responseTime: Date(timeIntervalSince1970: responseTime), body: body, bodyLength: bodyLength)
        }
    }
#endif
