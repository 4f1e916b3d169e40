#if Serve
    import Foundation
    import NIOHTTP1
    import StashHTTP

    /// A client's own conditional `GET` or `HEAD` (`If-None-Match`, `If-Modified-Since`), evaluated
    /// against the stored response that answers it (RFC 9111 §4.3.2, RFC 9110 §13).
    enum ConditionalRequest {
        /// Whether a request carries a precondition the proxy evaluates (a cheap test before
        /// ``isNotModified(method:requestHeaders:stored:)``).
        static func isConditional(_ headers: HTTPHeaders) -> Bool {
            headers.contains(name: "if-none-match") || headers.contains(name: "if-modified-since")
        }

        /// Whether the stored response answers the request with `304 Not Modified`.
        ///
        /// RFC 9110 §13.2.2: `If-None-Match` first, and when present `If-Modified-Since` is ignored;
        /// the preconditions apply only to a `GET` or `HEAD` whose response would be a `2xx` (§13.2.1).
        /// RFC 9111 §4.3.2: without a stored `Last-Modified`, `If-Modified-Since` is compared with the
        /// stored `Date`, or else the time the response was received.
        static func isNotModified(method: HTTPMethod, requestHeaders: HTTPHeaders, stored: CachedResponse) -> Bool {
            guard method == .GET || method == .HEAD, (200..<300).contains(stored.status), stored.status != 206
            else { return false }
            let noneMatch = requestHeaders["if-none-match"]
            if !noneMatch.isEmpty {
                // §13.1.2: false (so 304) when a listed tag weakly matches the stored ETag, or for `*`.
                let listed = noneMatch.flatMap(entityTags)
                if listed.contains("*") { return true }
                guard let etag = stored.headers.first(name: "etag").map(opaqueTag) else { return false }
                return listed.contains { opaqueTag($0) == etag }
            }
            // §13.1.3: ignored unless it is one valid HTTP-date.
            let modifiedSince = requestHeaders["if-modified-since"]
            guard modifiedSince.count == 1, let since = HTTPCachePolicy.parseHTTPDate(modifiedSince[0]) else {
                return false
            }
            let modified =
                stored.headers.first(name: "last-modified").flatMap(HTTPCachePolicy.parseHTTPDate)
                ?? stored.headers.first(name: "date").flatMap(HTTPCachePolicy.parseHTTPDate)
                ?? stored.responseTime
            return modified <= since
        }

        /// The fields of the `304` sent in place of `stored` (RFC 9110 §15.4.5): those a `200` would
        /// carry that guide caches (`Cache-Control`, `Content-Location`, `Date`, `ETag`, `Expires`,
        /// `Vary`, and `Last-Modified`), no content metadata.
        static func notModifiedHeaders(_ stored: CachedResponse) -> HTTPHeaders {
            let kept: Set<String> = [
                "cache-control", "cdn-cache-control", "content-location", "date", "etag", "expires", "vary",
                "last-modified",
            ]
            var headers = HTTPHeaders()
            for (name, value) in stored.headers where kept.contains(name.lowercased()) {
                headers.add(name: name, value: value)
            }
            return headers
        }

        /// The members of an `If-None-Match` line: entity-tags (commas inside quotes kept) or `*`.
        private static func entityTags(_ line: String) -> [String] {
            var tags: [String] = []
            var current = ""
            var quoted = false
            for character in line {
                if character == "\"" { quoted.toggle() }
                if character == ",", !quoted {
                    tags.append(current.trimmingCharacters(in: .whitespaces))
                    current = ""
                } else {
                    current.append(character)
                }
            }
            tags.append(current.trimmingCharacters(in: .whitespaces))
            return tags.filter { !$0.isEmpty }
        }

        /// An entity-tag without its weakness flag: the weak comparison of RFC 9110 §8.8.3.2.
        private static func opaqueTag(_ tag: String) -> String {
            let trimmed = tag.trimmingCharacters(in: .whitespaces)
            return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
        }
    }
#endif
