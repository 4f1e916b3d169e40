import Foundation

extension HTTPCachePolicy {
    // MARK: - Updating stored responses (§3.2, §4.3.4) and invalidating them (§4.4)

    /// The header fields of a stored response after a `304 Not Modified` validated it (§3.2,
    /// §4.3.4): each field the 304 carries replaces every line of that name, the others are kept.
    ///
    /// Not taken from the 304: hop-by-hop fields, those its `Connection` names and the proxy's
    /// own (§3.1), and `Content-Length`, which describes the stored body (§3.2).
    ///
    /// - Parameters:
    ///   - stored: The stored response's header fields.
    ///   - notModified: The 304's header fields.
    /// - Returns: The fields to store (and to send with the stored body).
    /// - Complexity: O(*n* · *m*) for *n* stored and *m* new lines.
    public func headersAfterNotModified(stored: HTTPFields, notModified: HTTPFields) -> HTTPFields {
        var skipped = Self.unstoredFields
        skipped.insert("content-length")
        for line in notModified.values(for: "Connection") {
            for name in line.split(separator: ",") {
                skipped.insert(name.trimmingHTTPWhitespace.lowercased())
            }
        }
        let incoming = notModified.filter { !skipped.contains($0.name.lowercased()) }
        let replaced = Set(incoming.map { $0.name.lowercased() })
        var updated = HTTPFields(stored.filter { !replaced.contains($0.name.lowercased()) })
        for field in incoming { updated.add(field.value, for: field.name) }
        return updated
    }

    /// Whether a method is safe (RFC 9110 §9.2.1), so that its responses invalidate nothing.
    public static func isSafe(method: String) -> Bool {
        ["GET", "HEAD", "OPTIONS", "TRACE"].contains(method.uppercased())
    }

    /// The URIs whose stored responses a cache must drop after a response to an unsafe request
    /// (§4.4).
    ///
    /// For any method but `GET`, `HEAD`, `OPTIONS` and `TRACE` (so `POST`, `PUT`, `DELETE`,
    /// `PATCH` and unknown ones) answered with a non-error status (2xx or 3xx): the target URI,
    /// and the URIs in `Location` and `Content-Location` (resolved against it) when they have
    /// the same origin (scheme, host and port). Empty otherwise.
    ///
    /// - Parameters:
    ///   - method: The request method, any case.
    ///   - requestURL: The target URI.
    ///   - status: The response status.
    ///   - responseHeaders: The response's header fields.
    /// - Returns: The URIs to invalidate, the target first, without duplicates.
    /// - Complexity: O(*n*) in the header fields' length.
    public func invalidatedURLs(method: String, requestURL: URL, status: Int, responseHeaders: HTTPFields) -> [URL] {
        guard !Self.isSafe(method: method), (200..<400).contains(status) else { return [] }
        var urls = [requestURL]
        for name in ["Location", "Content-Location"] {
            guard let value = responseHeaders.values(for: name).first,
                let url = URL(string: value, relativeTo: requestURL)?.absoluteURL,
                Self.sameOrigin(url, requestURL), !urls.contains(url)
            else { continue }
            urls.append(url)
        }
        return urls
    }

    private static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        func port(_ url: URL) -> Int? {
            url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
        }
        return lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host?.lowercased() == rhs.host?.lowercased()
            && port(lhs) == port(rhs)
    }
}
