#if Serve
    import NIOHTTP1

    /// The header rules a proxy follows when it forwards a message (RFC 9110 §7.6).
    enum ProxyHeaders {
        /// The `Via` entry this proxy adds (RFC 9110 §7.6.3).
        static let via = "1.1 stash"

        /// Hop-by-hop fields: they describe one connection and are never forwarded (RFC 9110 §7.6.1).
        static let hopByHop: Set<String> = [
            "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "proxy-connection",
            "proxy-authenticate", "proxy-authorization", "proxy-authentication-info",
        ]

        /// `headers` without the hop-by-hop fields, the fields `Connection` names, and `excluding`.
        static func endToEnd(_ headers: HTTPHeaders, excluding: Set<String> = []) -> HTTPHeaders {
            var named = Set<String>()
            for value in headers[canonicalForm: "connection"] { named.insert(value.lowercased()) }
            var result = HTTPHeaders()
            result.reserveCapacity(headers.count)
            for (name, value) in headers {
                let lower = name.lowercased()
                if hopByHop.contains(lower) || named.contains(lower) || excluding.contains(lower) { continue }
                if lower.hasPrefix("proxy-") { continue }
                result.add(name: name, value: value)
            }
            return result
        }

        /// Appends this proxy's `Via` entry to `headers` (another field line: the same as a list entry).
        static func addVia(to headers: inout HTTPHeaders, version: HTTPVersion) {
            headers.add(name: "Via", value: version.major == 1 && version.minor == 0 ? "1.0 stash" : via)
        }
    }
#endif
