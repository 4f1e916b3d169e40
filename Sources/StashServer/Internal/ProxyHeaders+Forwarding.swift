#if Serve
    import NIOHTTP1

    extension ProxyHeaders {
        /// The forwarding fields a client might send to make the origin believe another host, scheme
        /// or address (RFC 7239 and its `X-Forwarded-*` predecessors).
        static let forwardingFields: Set<String> = [
            "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port",
            "x-forwarded-server", "x-real-ip",
        ]

        /// Sets the forwarding fields of a request to the origin (RFC 7239).
        ///
        /// From a peer outside `trusted`, the client's own `Forwarded` and `X-Forwarded-*` fields are
        /// dropped, so that an origin that builds links from them cannot be made to put a client's
        /// chosen host into a response that the cache then serves to everyone; the proxy sets its
        /// own: `X-Forwarded-For` and `Forwarded: for=` with the peer's address, `X-Forwarded-Proto`
        /// and `proto=` (`http`), and `X-Forwarded-Host` and `host=` only when the request's `Host`
        /// is one of `authorities` (the origin's own name or an alias).
        ///
        /// From a trusted peer (a load balancer in front), its fields are kept and the peer's address
        /// is appended to `X-Forwarded-For` and as a new `Forwarded` element (RFC 7239 §4).
        static func setForwarding(
            _ headers: inout HTTPHeaders, client: String, requestHost: String?, options: ServeOptions
        ) {
            let node = forwardedNode(client)
            if ServeOptions.contains(options.trustedForwarders, client) {
                let previous = headers[canonicalForm: "x-forwarded-for"].joined(separator: ", ")
                headers.remove(name: "x-forwarded-for")
                headers.add(name: "X-Forwarded-For", value: previous.isEmpty ? client : previous + ", " + client)
                let elements = headers[canonicalForm: "forwarded"].joined(separator: ", ")
                var element = "for=\(node)"
                if elements.isEmpty {
                    element += ";proto=http"
                    if let host = acceptedHost(requestHost, options) { element += ";host=\(quoted(host))" }
                }
                headers.remove(name: "forwarded")
                headers.add(name: "Forwarded", value: elements.isEmpty ? element : elements + ", " + element)
                if !headers.contains(name: "x-forwarded-proto") {
                    headers.add(name: "X-Forwarded-Proto", value: "http")
                }
                return
            }
            for name in forwardingFields { headers.remove(name: name) }
            var element = "for=\(node);proto=http"
            headers.add(name: "X-Forwarded-For", value: client)
            headers.add(name: "X-Forwarded-Proto", value: "http")
            if let host = acceptedHost(requestHost, options) {
                headers.add(name: "X-Forwarded-Host", value: host)
                element += ";host=\(quoted(host))"
            }
            headers.add(name: "Forwarded", value: element)
        }

        /// The request's `Host` when it names the origin or an alias, else `nil`.
        private static func acceptedHost(_ host: String?, _ options: ServeOptions) -> String? {
            guard let host = host?.lowercased(), !host.isEmpty else { return nil }
            return options.authorities.contains(host) || options.authorities.contains(hostOnly(host)) ? host : nil
        }

        private static func hostOnly(_ authority: String) -> String {
            if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
                return String(authority[...close])
            }
            guard let colon = authority.lastIndex(of: ":") else { return authority }
            return String(authority[..<colon])
        }

        /// RFC 7239 §6: an IPv6 node is quoted and bracketed; an unknown one is `unknown`.
        private static func forwardedNode(_ address: String) -> String {
            if address == "-" || address.isEmpty { return "unknown" }
            return address.contains(":") ? "\"[\(address)]\"" : address
        }

        private static func quoted(_ value: String) -> String {
            value.contains(":") ? "\"\(value)\"" : value
        }
    }
#endif
