import Foundation

/// The rules of RFC 9111 (HTTP Caching) for a private or a shared cache, as pure functions of
/// header fields, statuses and times: no I/O, no clock, no state.
///
/// A cache (``ResourceLoader``, a reverse proxy) asks it, in order:
/// 1. whether a response may be stored, and with which header fields:
///    ``storableHeaders(method:requestHeaders:status:responseHeaders:)`` (§3), and whether its
///    body is complete: ``isComplete(bodyLength:responseHeaders:)`` (§3.3);
/// 2. whether a stored response may answer a request: ``reuse(method:requestHeaders:stored:now:)``
///    (§4, §4.1, §4.2, §5.2.1), with the `Age` to send (``currentAge(responseHeaders:requestTime:responseTime:now:)``, §4.2.3);
/// 3. after a `304`, the refreshed header fields: ``headersAfterNotModified(stored:notModified:)``
///    (§3.2, §4.3.4);
/// 4. after an unsafe request, which stored responses to drop:
///    ``invalidatedURLs(method:requestURL:status:responseHeaders:)`` (§4.4).
///
/// ```swift
/// let policy = HTTPCachePolicy(kind: .shared)
/// guard let headers = policy.storableHeaders(
///     method: "GET", requestHeaders: request, status: 200, responseHeaders: response) else { return }
/// ```
public struct HTTPCachePolicy: Sendable {
    /// Whether the cache answers one user or many.
    public var kind: HTTPCacheKind
    /// The fraction of the time since `Last-Modified` that a response without explicit
    /// freshness is taken to stay fresh (§4.2.2).
    ///
    /// Defaults to 0.1, as RFC 9111 suggests.
    public var heuristicFraction: Double
    /// The longest heuristic freshness (§4.2.2).
    ///
    /// Defaults to one day.
    public var maxHeuristicFreshness: Duration
    /// The targeted cache-control fields this cache obeys, highest priority first (RFC 9213):
    /// a CDN or reverse proxy passes `["CDN-Cache-Control"]`, or its own field before it.
    ///
    /// The first of them that a response carries with a valid value (a Structured Field
    /// Dictionary, see ``HTTPCacheControl/init(targetedLines:)``) replaces `Cache-Control` and
    /// `Expires` for storing and freshness (RFC 9213 §2.2): `CDN-Cache-Control: no-store`
    /// is not stored despite `Cache-Control: max-age`, and `CDN-Cache-Control: max-age=60` is
    /// stored despite `Cache-Control: no-store`. An absent, empty or invalid field is ignored.
    /// Request directives are unaffected.
    ///
    /// Defaults to none: a private cache, or a shared one that is not a CDN.
    public var targetedFields: [String]

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - kind: Private (one user) or shared (many).
    ///   - heuristicFraction: See ``heuristicFraction``; clamped to 0...1.
    ///   - maxHeuristicFreshness: See ``maxHeuristicFreshness``.
    ///   - targetedFields: See ``targetedFields``.
    public init(
        kind: HTTPCacheKind, heuristicFraction: Double = 0.1, maxHeuristicFreshness: Duration = .seconds(86_400),
        targetedFields: [String] = []
    ) {
        self.kind = kind
        self.heuristicFraction = min(1, max(0, heuristicFraction.isFinite ? heuristicFraction : 0))
        self.maxHeuristicFreshness = max(.zero, maxHeuristicFreshness)
        self.targetedFields = targetedFields
    }

    /// The statuses that are cacheable by default: stored and given heuristic freshness without
    /// explicit freshness (RFC 9110 §15.1).
    public static let heuristicallyCacheableStatuses: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// The statuses whose caching requirements this policy implements, for `must-understand`
    /// (§5.2.2.3): those RFC 9110 defines.
    public static let understoodStatuses: Set<Int> = Set(
        [200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 304, 305, 307, 308, 421, 422, 426]
            + Array(400...417) + Array(500...505))

    /// Header fields never stored (§3.1): hop-by-hop fields and those of the proxy that
    /// forwarded the request.
    static let unstoredFields: Set<String> = [
        "connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade", "trailer",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    // MARK: - Storing responses (§3)

    /// The header fields to store for a response, or `nil` when it must not be stored (§3).
    ///
    /// A response is storable when the method is `GET` or `HEAD`; the status is final, not `206`
    /// (no partial content is combined) nor `304`; with `must-understand`, the status is one
    /// this policy understands (and then `no-store` is ignored, §5.2.2.3); otherwise there is no
    /// `no-store` in the response or the request (§5.2.2.5, §5.2.1.5); for a shared cache, no
    /// unqualified `private` (§5.2.2.7) and, if the request has `Authorization`, one of
    /// `public`, `s-maxage` or `must-revalidate` (§3.5); and the response has `public`,
    /// `private` (private cache), `Expires`, `max-age`, `s-maxage` (shared cache) or a
    /// heuristically cacheable status. A valid field of ``targetedFields`` stands in for
    /// `Cache-Control` and `Expires` in all of this (RFC 9213 §2.2).
    ///
    /// The fields returned leave out hop-by-hop fields, those that `Connection` names, and the
    /// proxy's own (§3.1); the fields that a qualified `no-cache="…"` names (§5.2.2.4); and for
    /// a shared cache those that a qualified `private="…"` names (§5.2.2.7).
    ///
    /// - Parameters:
    ///   - method: The request method, any case.
    ///   - requestHeaders: The request's header fields.
    ///   - status: The response status.
    ///   - responseHeaders: The response's header fields.
    /// - Returns: The fields to store, or `nil` when the response must not be stored.
    /// - Complexity: O(*n*) in the header fields' length.
    public func storableHeaders(method: String, requestHeaders: HTTPFields, status: Int, responseHeaders: HTTPFields)
        -> HTTPFields?
    {
        let method = method.uppercased()
        guard method == "GET" || method == "HEAD" else { return nil }
        guard (200..<600).contains(status), status != 206, status != 304 else { return nil }
        let directives = responseDirectives(responseHeaders)
        let control = directives.control
        if control.mustUnderstand {
            guard Self.understoodStatuses.contains(status) else { return nil }
        } else if control.noStore {
            return nil
        }
        if HTTPCacheControl(requestHeaders).noStore { return nil }
        if kind == .shared {
            if control.isPrivate { return nil }
            if requestHeaders.contains("Authorization"),
                !(control.isPublic || control.sharedMaxAge != nil || control.mustRevalidate)
            {
                return nil
            }
        }
        let isExplicitlyStorable =
            control.isPublic || (kind == .private && control.contains("private"))
            || (!directives.isTargeted && responseHeaders.contains("Expires")) || control.maxAge != nil
            || (kind == .shared && control.sharedMaxAge != nil)
        guard isExplicitlyStorable || Self.heuristicallyCacheableStatuses.contains(status) else { return nil }
        var stored = responseHeaders
        var dropped = Self.unstoredFields
        for line in responseHeaders.values(for: "Connection") {
            for name in line.split(separator: ",") {
                dropped.insert(name.trimmingHTTPWhitespace.lowercased())
            }
        }
        dropped.formUnion(control.noCacheFields)
        if kind == .shared { dropped.formUnion(control.privateFields) }
        stored.remove(lowercasedNames: dropped)
        return stored
    }

    /// Whether a body of `bodyLength` bytes is complete: a cache must not store an incomplete
    /// one as if it were whole (§3.3, §3.4).
    ///
    /// - Returns: `false` when `Content-Length` announces another length (or several different
    ///   ones); `true` when it matches or is absent (a body delimited by the connection's end
    ///   is complete when it ended cleanly, which the caller knows).
    /// - Complexity: O(*n*) in the header fields' length.
    public func isComplete(bodyLength: Int, responseHeaders: HTTPFields) -> Bool {
        let lengths = responseHeaders.values(for: "Content-Length").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace }
        guard let first = lengths.first else { return true }
        guard lengths.allSatisfy({ $0 == first }), let length = HTTPCacheControl.deltaSeconds(first) else {
            return false
        }
        return length == bodyLength
    }

    /// The request's values of the header fields that the response's `Vary` names (§4.1), to
    /// keep in ``StoredResponse/varyingRequestHeaders``; fields the request lacks are left out.
    ///
    /// - Complexity: O(*n* · *v*) for *n* request lines and *v* names in `Vary`.
    public func varyingRequestHeaders(responseHeaders: HTTPFields, requestHeaders: HTTPFields) -> HTTPFields {
        var varying = HTTPFields()
        for name in Self.varyNames(responseHeaders) where name != "*" {
            for value in requestHeaders.values(for: name) { varying.add(value, for: name) }
        }
        return varying
    }

    /// The lowercased field names that a response's `Vary` lines list.
    static func varyNames(_ headers: HTTPFields) -> [String] {
        var names: [String] = []
        for line in headers.values(for: "Vary") {
            for name in line.httpListMembers {
                let name = name.asciiLowercased
                if !names.contains(name) { names.append(name) }
            }
        }
        return names
    }
}
