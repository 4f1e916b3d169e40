#if Serve
    import Foundation
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The operator's rules a proxy applies to requests: which authorities an absolute-form target may
    /// name, whose forwarding fields to trust, who may purge, and how large a response a `Range` miss
    /// fetches whole.
    struct ServeOptions: Sendable {
        /// Lower-cased `host` or `host:port` names that an absolute-form target may name (RFC 9112
        /// §3.2.2): the origin's and the configured aliases.
        var authorities: Set<String>
        /// Peers whose `Forwarded` and `X-Forwarded-*` fields are kept (RFC 7239 §8.1).
        var trustedForwarders: [AddressRange]
        /// Peers of the proxy listener that may send `PURGE`.
        var purgeAllowList: [AddressRange]
        /// A `GET` miss with `Range` fetches the whole response up to this many bytes.
        var rangeFetchLimit: Int
        /// The request decoder's header limit, for a decoder that replaces one after `Upgrade`.
        var maximumHeaderSize: Int

        /// Checks and gathers the configuration's rules.
        ///
        /// - Throws: `StashError` with `StashError.Code.invalidArgument` for an address range that
        ///   does not parse.
        init(_ configuration: ProxyServer.Configuration) throws {
            var authorities = Set<String>()
            let origin = configuration.origin
            if let host = origin.host?.lowercased() {
                let scheme = origin.scheme?.lowercased() ?? "http"
                let port = origin.port ?? (scheme == "https" ? 443 : 80)
                authorities.insert(Self.authority(host: host, port: port, scheme: scheme))
            }
            for alias in configuration.hostAliases {
                authorities.insert(alias.lowercased())
            }
            self.authorities = authorities
            self.trustedForwarders = try configuration.trustedForwarders.map {
                try AddressRange(parsing: $0, option: "trusted forwarders")
            }
            self.purgeAllowList = try configuration.purgeAllowList.map {
                try AddressRange(parsing: $0, option: "purge allow list")
            }
            self.rangeFetchLimit = configuration.rangeFetchLimit.bytes
            self.maximumHeaderSize = configuration.maximumHeaderSize
        }

        /// `host` alone for the scheme's default port, else `host:port`; IPv6 hosts bracketed.
        static func authority(host: String, port: Int, scheme: String) -> String {
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            let defaultPort = scheme == "https" ? 443 : 80
            return port == defaultPort ? bracketed : "\(bracketed):\(port)"
        }

        /// Whether an absolute-form target's authority names the origin or an alias.
        ///
        /// An alias without a port accepts the name on any port.
        func accepts(host: String, port: Int?, scheme: String) -> Bool {
            let host = host.lowercased()
            let defaultPort = scheme == "https" ? 443 : 80
            if authorities.contains(Self.authority(host: host, port: port ?? defaultPort, scheme: scheme)) {
                return true
            }
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return authorities.contains(bracketed) || authorities.contains("\(bracketed):\(port ?? defaultPort)")
        }

        /// Whether `address` (a textual IP address) is in one of `ranges`.
        static func contains(_ ranges: [AddressRange], _ address: String) -> Bool {
            guard !ranges.isEmpty, let bytes = AddressRange.bytes(of: address) else { return false }
            return ranges.contains { $0.contains(bytes) }
        }
    }

    /// An IPv4 or IPv6 address range in CIDR notation (`10.0.0.0/8`, `::1/128`, or one address).
    struct AddressRange: Sendable, Equatable {
        let network: [UInt8]
        let prefixLength: Int

        /// Parses `text`.
        ///
        /// - Throws: `StashError` with `StashError.Code.invalidArgument` naming `text` and `option`.
        init(parsing text: String, option: String) throws {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let bytes = Self.bytes(of: String(parts[0])) else {
                throw StashError(
                    .invalidArgument,
                    "'\(text)' in the \(option) is not an IP address or CIDR range (such as 10.0.0.0/8 or ::1/128).")
            }
            let bits = bytes.count * 8
            let length = parts.count == 2 ? Int(parts[1]) : bits
            guard let length, (0...bits).contains(length) else {
                throw StashError(
                    .invalidArgument,
                    "'\(text)' in the \(option) has a prefix length outside 0-\(bits): use such as 10.0.0.0/8.")
            }
            self.network = bytes
            self.prefixLength = length
        }

        /// Whether the address `bytes` is in the range (an IPv4-mapped IPv6 address counts as IPv4).
        func contains(_ bytes: [UInt8]) -> Bool {
            var bytes = bytes
            if bytes.count == 16, network.count == 4, bytes[0..<10].allSatisfy({ $0 == 0 }),
                bytes[10] == 0xFF, bytes[11] == 0xFF
            {
                bytes = Array(bytes[12...])
            }
            guard bytes.count == network.count else { return false }
            var remaining = prefixLength
            for index in 0..<bytes.count where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if bytes[index] & mask != network[index] & mask { return false }
                remaining -= bits
            }
            return true
        }

        /// The bytes of a textual IPv4 or IPv6 address, or `nil`.
        static func bytes(of text: String) -> [UInt8]? {
            var v4 = in_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                return withUnsafeBytes(of: &v4) { Array($0) }
            }
            var v6 = in6_addr()
            var trimmed = text
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") { trimmed = String(trimmed.dropFirst().dropLast()) }
            if inet_pton(AF_INET6, trimmed, &v6) == 1 {
                return withUnsafeBytes(of: &v6) { Array($0) }
            }
            return nil
        }
    }
#endif
