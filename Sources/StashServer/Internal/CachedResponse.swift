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
    ///
    /// A response read from the disk tier's stored text with a ``StoredHead`` record holds only what
    /// a plain fresh hit writes (the encoded head, the freshness, the times); its header fields are
    /// decoded from the same text the first time something asks for them (``headers``,
    /// ``stored``, ``servedHeaders``).
    final class CachedResponse: Sendable {
        /// The stored status code.
        let status: Int
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
        /// Until when a request without cache directives of its own may take it as fresh; `nil`
        /// when such a request must always go through the full policy.
        let plainFreshUntil: Date?
        /// The policy's current age at ``responseTime`` (RFC 9111 §4.2.3 `corrected_initial_age`):
        /// the age at any later instant is this plus the time since.
        let initialAge: Duration
        /// The status line and ``servedHeaders`` in HTTP/1.1, encoded once: a memory-tier hit writes
        /// them with only its own `Age` (and `Connection: close`) and the blank line after them.
        let encodedHead: ByteBuffer
        /// What the response costs the memory tier: the body's buffer, the encoded head, and the
        /// fields kept three times over (``headers``, ``servedHeaders``, ``stored``), each field
        /// as two strings and an element, plus the objects around them (charged in full for a
        /// response whose fields are decoded later: they are once anything asks for them).
        let memoryCost: Int
        /// ``memoryCost``'s field part: each field's name and value bytes plus ``perFieldCost``,
        /// over the header fields and the `Vary` values.
        let fieldBytes: Int
        private let fields: FieldSource

        /// The stored end-to-end header fields, in their order (no `Age`, no hop-by-hop fields).
        var headers: HTTPHeaders { fields.value.headers }
        /// The response as ``ServePolicy`` judges it.
        var stored: StoredResponse { fields.value.stored }
        /// ``headers`` as an HTTP/1.1 client gets them, but for `Age`: `Via` added, the stored `Age`
        /// removed (each response gets its own).
        var servedHeaders: HTTPHeaders { fields.value.served }

        init(
            status: Int, headers: HTTPHeaders, varyValues: [String: String], requestTime: Date, responseTime: Date,
            body: ByteBuffer?, bodyLength: Int
        ) {
            self.status = status
            self.varyValues = varyValues
            self.requestTime = requestTime
            self.responseTime = responseTime
            self.body = body
            self.bodyLength = bodyLength
            let decoded = Fields(
                status: status, headers: headers, varyValues: varyValues, requestTime: requestTime,
                responseTime: responseTime)
            self.fields = .decoded(decoded)
            let initialAge = ServePolicy.policy.currentAge(of: decoded.stored, now: responseTime)
            self.initialAge = initialAge
            self.plainFreshUntil = ServePolicy.plainFreshUntil(decoded.stored, initialAge: initialAge)
            var encoded = ByteBufferAllocator().buffer(capacity: 512)
            ResponseEncoder.encodeHead(
                status: HTTPResponseStatus(statusCode: status), headers: decoded.served, into: &encoded)
            self.encodedHead = encoded
            var fieldBytes = 0
            for (name, value) in headers { fieldBytes += name.utf8.count + value.utf8.count + Self.perFieldCost }
            for (name, value) in varyValues { fieldBytes += name.utf8.count + value.utf8.count + Self.perFieldCost }
            self.fieldBytes = fieldBytes
            self.memoryCost = (body?.capacity ?? 0) + encoded.capacity + 3 * fieldBytes + Self.fixedCost
        }

        /// A head (no body) from a ``StoredHead`` record of the disk tier's stored `text`: its
        /// header fields are decoded from `text` when first asked for.
        init(record: StoredHead, text: String, bodyLength: Int) {
            self.status = record.status
            self.varyValues = [:]
            self.requestTime = record.requestTime
            self.responseTime = record.responseTime
            self.body = nil
            self.bodyLength = bodyLength
            self.plainFreshUntil = record.plainFreshUntil
            self.initialAge = record.initialAge
            self.encodedHead = record.encodedHead
            self.fieldBytes = record.fieldBytes
            self.memoryCost = record.encodedHead.capacity + 3 * record.fieldBytes + Self.fixedCost
            self.fields = .deferred(
                DeferredFields(
                    text: text, status: record.status, requestTime: record.requestTime,
                    responseTime: record.responseTime))
        }

        /// One field's overhead beyond its bytes: two string allocations (malloc rounds each to
        /// 16 bytes, with a 32-byte header) and its element in the array or `HTTPFields`.
        static let perFieldCost = 96
        /// The objects every stored response has: this one, the `StoredResponse`, the arrays and
        /// dictionary, the memory tier's key and entry, with malloc's overhead.
        static let fixedCost = 1024

        /// What this head (without its body) takes in memory.
        ///
        /// While its fields are not decoded: the encoded head's buffer and the objects around it
        /// (``DiskHeads`` adds the stored text and the key). A head whose fields are decoded costs
        /// ``memoryCost`` less its body.
        var undecodedHeadCost: Int {
            fields.isDeferred ? encodedHead.capacity + Self.undecodedFixedCost : memoryCost - (body?.capacity ?? 0)
        }

        /// The objects of a head whose fields are not decoded: this one, its ``DeferredFields`` and
        /// lock, with malloc's overhead.
        static let undecodedFixedCost = 448

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
            self.varyValues = head.varyValues
            self.requestTime = head.requestTime
            self.responseTime = head.responseTime
            self.body = body
            self.bodyLength = body.readableBytes
            self.fields = head.fields
            self.plainFreshUntil = head.plainFreshUntil
            self.initialAge = head.initialAge
            self.encodedHead = head.encodedHead
            self.fieldBytes = head.fieldBytes
            self.memoryCost = head.memoryCost - (head.body?.capacity ?? 0) + body.capacity
        }

        // MARK: - Disk and shared metadata

        /// The names of the metadata fields a stored response is kept under in the disk and
        /// shared tiers.
        enum Field {
            static let status = "serve.status"
            static let headers = "serve.headers"
            static let vary = "serve.vary"
            static let requestTime = "serve.request-time"
            static let responseTime = "serve.response-time"
            /// The ``StoredHead`` record: what a plain fresh disk hit needs, cheap to read.
            static let head = "serve.head"
        }

        /// The metadata that carries everything but the body into the disk and shared tiers.
        var metadata: DiskCache.Metadata {
            let headerText = FieldListCoding.encode(pairs: headers.lazy.map { ($0.name, $0.value) })
            let varyText = FieldListCoding.encode(dictionary: varyValues)
            var extra = [
                Field.status: String(status), Field.headers: headerText, Field.vary: varyText,
                Field.requestTime: String(requestTime.timeIntervalSince1970),
                Field.responseTime: String(responseTime.timeIntervalSince1970),
            ]
            if varyValues.isEmpty { extra[Field.head] = StoredHead.text(of: self) }
            return DiskCache.Metadata(
                contentType: headers.first(name: "content-type"), etag: headers.first(name: "etag"),
                lastModified: headers.first(name: "last-modified"), extra: extra)
        }

        /// Rebuilds a response from tier metadata, or `nil` when the metadata is not the proxy's.
        convenience init?(metadata: DiskCache.Metadata, body: ByteBuffer?, bodyLength: Int) {
            guard let parts = Self.parts(of: metadata.extra) else { return nil }
            self.init(
                status: parts.status, headers: parts.headers, varyValues: parts.varyValues,
                requestTime: parts.requestTime, responseTime: parts.responseTime, body: body, bodyLength: bodyLength)
        }

        /// The head's parts in tier metadata's `extra`, or `nil` when it is not the proxy's.
        static func parts(of extra: [String: String]) -> (
            status: Int, headers: HTTPHeaders, varyValues: [String: String], requestTime: Date, responseTime: Date
        )? {
            guard let status = extra[Field.status].flatMap({ Int($0) }),
                let pairs = extra[Field.headers].flatMap(FieldListCoding.decodePairs),
                let requestTime = extra[Field.requestTime].flatMap({ Double($0) }),
                let responseTime = extra[Field.responseTime].flatMap({ Double($0) })
            else { return nil }
            let vary = extra[Field.vary].flatMap(FieldListCoding.decodeDictionary) ?? [:]
            var headers = HTTPHeaders()
            for pair in pairs where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
            return (
                status, headers, vary, Date(timeIntervalSince1970: requestTime),
                Date(timeIntervalSince1970: responseTime)
            )
        }

        // MARK: - Header fields

        /// The header fields and the policy's view of them.
        struct Fields: Sendable {
            let headers: HTTPHeaders
            let stored: StoredResponse
            let served: HTTPHeaders

            init(status: Int, headers: HTTPHeaders, varyValues: [String: String], requestTime: Date, responseTime: Date)
            {
                self.headers = headers
                self.stored = StoredResponse(
                    method: "GET", status: status, headers: ServePolicy.fields(headers), requestTime: requestTime,
                    responseTime: responseTime,
                    varyingRequestHeaders: HTTPFields(
                        varyValues.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))
                var served = headers
                served.remove(name: "age")
                ProxyHeaders.addVia(to: &served, version: .http1_1)
                self.served = served
            }
        }

        /// Where a response's ``Fields`` come from: built with it, or decoded from the stored
        /// text when first asked for.
        private enum FieldSource: Sendable {
            case decoded(Fields)
            case deferred(DeferredFields)

            var value: Fields {
                switch self {
                case .decoded(let fields): fields
                case .deferred(let deferred): deferred.value
                }
            }

            var isDeferred: Bool {
                if case .deferred = self { return true }
                return false
            }
        }

        /// The header fields of a response read from a ``StoredHead`` record, decoded from the
        /// stored text the first time they are asked for (a plain fresh hit never asks).
        private final class DeferredFields: Sendable {
            private let text: String
            private let status: Int
            private let requestTime: Date
            private let responseTime: Date
            private let decoded = LockedValue<Fields?>(nil)

            init(text: String, status: Int, requestTime: Date, responseTime: Date) {
                self.text = text
                self.status = status
                self.requestTime = requestTime
                self.responseTime = responseTime
            }

            var value: Fields {
                if let fields = decoded.withLock({ $0 }) { return fields }
                // The record was read from this text, so it is the proxy's: its fields decode. The
                // times and status are the record's (written from the same response).
                let headers = CachedResponse.parts(of: DiskCache.decodeExtra(text))?.headers ?? HTTPHeaders()
                let fields = Fields(
                    status: status, headers: headers, varyValues: [:], requestTime: requestTime,
                    responseTime: responseTime)
                return decoded.withLock { kept in
                    if let kept { return kept }
                    kept = fields
                    return fields
                }
            }
        }
    }
#endif
