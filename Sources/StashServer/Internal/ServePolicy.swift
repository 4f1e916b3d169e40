#if Serve
    import Foundation
    import NIOHTTP1
    import StashHTTP

    /// The proxy's use of StashHTTP's ``HTTPCachePolicy`` of the shared kind: every caching decision
    /// `stash serve` makes goes through here, translated between NIO's `HTTPHeaders` and the policy's
    /// `HTTPFields`.
    enum ServePolicy {
        /// The shared-cache policy (RFC 9111 with §3.5 and §5.2.2.7's shared-cache rules).
        ///
        /// A reverse proxy is the cache `CDN-Cache-Control` targets (RFC 9213): it takes precedence
        /// over `Cache-Control` when present and valid.
        static let policy = HTTPCachePolicy(kind: .shared, targetedFields: ["CDN-Cache-Control"])

        /// Whether a stored response may be reused for a request (RFC 9111 §4).
        enum Reuse: Equatable {
            case fresh
            case stale
            case revalidate
            case unusable
            case onlyIfCachedMiss
        }

        static func fields(_ headers: HTTPHeaders) -> HTTPFields {
            HTTPFields(headers.map { ($0.name, $0.value) })
        }

        static func headers(_ fields: HTTPFields) -> HTTPHeaders {
            HTTPHeaders(fields.map { ($0.name, $0.value) })
        }

        /// The headers to store for a response, or `nil` when a shared cache must not store it (§3).
        static func storableHeaders(
            method: HTTPMethod, requestHeaders: HTTPHeaders, status: Int, responseHeaders: HTTPHeaders
        ) -> HTTPHeaders? {
            policy.storableHeaders(
                method: method.rawValue, requestHeaders: fields(requestHeaders), status: status,
                responseHeaders: fields(responseHeaders)
            ).map(headers)
        }

        /// Whether a body of `length` bytes is the whole body the headers announce (§3.3).
        static func isComplete(bodyLength: Int, responseHeaders: HTTPHeaders) -> Bool {
            policy.isComplete(bodyLength: bodyLength, responseHeaders: fields(responseHeaders))
        }

        /// The request's values of the fields a response's `Vary` names (§4.1).
        static func varyingRequestHeaders(responseHeaders: HTTPHeaders, requestHeaders: HTTPHeaders) -> HTTPFields {
            policy.varyingRequestHeaders(
                responseHeaders: fields(responseHeaders), requestHeaders: fields(requestHeaders))
        }

        /// The `Age` value to send (§5.1).
        static func ageValue(_ stored: CachedResponse, now: Date) -> String {
            String(ageSeconds(stored, now: now))
        }

        /// The seconds of the `Age` to send (§5.1): whole seconds, at most 2³¹.
        static func ageSeconds(_ stored: CachedResponse, now: Date) -> Int {
            // §4.2.3: current_age = corrected_initial_age + resident_time.
            let resident = max(0, now.timeIntervalSince(stored.responseTime))
            let initial = stored.initialAge.components
            let age = Double(initial.seconds) + Double(initial.attoseconds) * 1e-18 + resident
            return Int(min(max(0, age), Double(HTTPCacheControl.maximumDeltaSeconds)))
        }

        /// When a request without directives of its own may take the stored response as fresh
        /// (derived from the policy when the response is stored), or `nil` when it never may.
        ///
        /// - Parameter initialAge: The policy's current age of `stored` at its response time
        ///   (computed once by the caller, which keeps it too).
        static func plainFreshUntil(_ stored: StoredResponse, initialAge: Duration) -> Date? {
            guard
                case .fresh = policy.reuse(
                    method: "GET", requestHeaders: HTTPFields(), stored: stored, now: stored.responseTime)
            else { return nil }
            let remaining = policy.freshnessLifetime(of: stored) - initialAge
            return stored.responseTime.addingTimeInterval(
                Double(remaining.components.seconds) + Double(remaining.components.attoseconds) * 1e-18)
        }

        /// Whether `stored` may answer a request with `requestHeaders` (§4).
        static func reuse(method: HTTPMethod = .GET, requestHeaders: HTTPHeaders, stored: CachedResponse, now: Date)
            -> Reuse
        {
            // The hit path: a request with no directives of its own, before the precomputed instant.
            if let until = stored.plainFreshUntil, now < until, stored.varyValues.isEmpty,
                !requestHeaders.contains(name: "cache-control"), !requestHeaders.contains(name: "pragma")
            {
                return .fresh
            }
            switch policy.reuse(
                method: method.rawValue, requestHeaders: varyFields(requestHeaders, stored), stored: stored.stored,
                now: now)
            {
            case .fresh: return .fresh
            case .stale: return .stale
            case .revalidate: return .revalidate
            case .unusable: return .unusable
            case .onlyIfCachedMiss: return .onlyIfCachedMiss
            }
        }

        /// The request's fields as the policy's `Vary` check sees them: the fields the stored response
        /// varies on are normalised as ``varyValue(_:in:)`` does, and one it varies on that the request
        /// lacks is the empty value the response was stored with (the omitted-field case).
        private static func varyFields(_ requestHeaders: HTTPHeaders, _ stored: CachedResponse) -> HTTPFields {
            guard !stored.varyValues.isEmpty else { return fields(requestHeaders) }
            var headers = requestHeaders
            for name in stored.varyValues.keys {
                let value = varyValue(name, in: requestHeaders)
                headers.remove(name: name)
                headers.add(name: name, value: value)
            }
            return fields(headers)
        }

        /// Whether a stale stored response may answer in place of an origin error (RFC 5861 §4).
        ///
        /// It must be stale by no more than the `stale-if-error` of the response (or of the request, for that
        /// request), and nothing forbids serving it stale (RFC 9111 §4.2.4: `no-cache`,
        /// `must-revalidate`, and for a shared cache `proxy-revalidate` and `s-maxage`). A request that
        /// asks for validation itself (`no-cache`, `no-store`) gets the error.
        static func mayServeStaleOnError(_ stored: CachedResponse, requestHeaders: HTTPHeaders, now: Date = Date())
            -> Bool
        {
            let request = HTTPCacheControl(fields(requestHeaders))
            if request.noCache || request.noStore { return false }
            guard policy.mayServeStale(stored.stored) else { return false }
            let allowed = max(
                policy.responseControl(stored.stored.headers).staleIfError ?? .zero, request.staleIfError ?? .zero)
            let staleness = policy.staleness(of: stored.stored, now: now)
            return staleness > .zero && staleness <= allowed
        }

        /// Whether a stale stored response may be served at once while one background revalidation
        /// runs (RFC 5861 §3): stale by no more than its `stale-while-revalidate`, nothing forbids
        /// serving it stale (RFC 9111 §4.2.4), and the request does not ask for validation itself.
        static func mayServeWhileRevalidating(
            _ stored: CachedResponse, requestHeaders: HTTPHeaders, now: Date = Date()
        ) -> Bool {
            let request = HTTPCacheControl(fields(requestHeaders))
            if request.noCache || request.noStore || request.maxAge != nil || request.minFresh != nil { return false }
            if !requestHeaders.contains(name: "cache-control"),
                requestHeaders[canonicalForm: "pragma"].contains(where: {
                    $0.lowercased() == "no-cache"
                })
            {
                return false
            }
            guard policy.mayServeStale(stored.stored),
                let window = policy.responseControl(stored.stored.headers).staleWhileRevalidate
            else { return false }
            let staleness = policy.staleness(of: stored.stored, now: now)
            return staleness > .zero && staleness <= window
        }

        /// Whether a stale stored response may answer when the origin could not be reached, refused
        /// or reset the connection, or closed it before answering (RFC 9111 §4.2.4: a disconnected
        /// cache may serve stale), unless `no-cache`, `must-revalidate`, or for a shared cache
        /// `proxy-revalidate` or `s-maxage` forbid it, or the request asks for validation itself.
        static func mayServeStaleWhenDisconnected(_ stored: CachedResponse, requestHeaders: HTTPHeaders) -> Bool {
            let request = HTTPCacheControl(fields(requestHeaders))
            if request.noCache || request.noStore { return false }
            return policy.mayServeStale(stored.stored)
        }

        /// A request field's value as the proxy compares it for `Vary` (RFC 9111 §4.1): the field lines
        /// joined, whitespace around them trimmed; `Accept-Language` also lower-cased and without
        /// whitespace (language tags are case-insensitive, RFC 5646 §2.1.1).
        static func varyValue(_ name: String, in headers: HTTPHeaders) -> String {
            let value = headers[canonicalForm: name].map { $0.trimmingCharacters(in: .whitespaces) }.joined(
                separator: ", ")
            guard name.lowercased() == "accept-language" else { return value }
            return String(value.lowercased().unicodeScalars.filter { $0 != " " && $0 != "\t" })
        }

        /// The stored headers updated with a `304 Not Modified`'s (§4.3.4).
        static func headersAfterNotModified(stored: HTTPHeaders, notModified: HTTPHeaders) -> HTTPHeaders {
            headers(policy.headersAfterNotModified(stored: fields(stored), notModified: fields(notModified)))
        }

        /// The URLs whose stored responses an unsafe request's response invalidates (§4.4).
        static func invalidatedURLs(method: HTTPMethod, url: URL, status: Int, responseHeaders: HTTPHeaders) -> [URL] {
            policy.invalidatedURLs(
                method: method.rawValue, requestURL: url, status: status, responseHeaders: fields(responseHeaders))
        }
    }
#endif
