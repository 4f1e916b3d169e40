#if Serve
    import ArgumentParser
    import Foundation
    import Stash
    import StashPostgres

    /// `stash purge URL --dir DIR`: removes what `stash serve` stored for a URL, while it is stopped.
    struct PurgeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge",
            abstract: "Remove the responses `stash serve` stored for a URL (or every URL under it, with --prefix).",
            discussion: """
                Works on the disk tier in --dir while the proxy is stopped (a running proxy is purged with \
                `PURGE /path` on its --metrics address), and with --shared on the shared tier too. Every \
                variant of the URL (Vary) goes with it. Exits with status 1 when nothing was stored for it.
                """
        )

        @Argument(help: "The URL as clients ask for it through the proxy, such as http://origin.example/a.png.")
        var url: String

        @Flag(help: "Remove every URL that starts with the given one.")
        var prefix = false

        @OptionGroup var options: CacheOptions

        @OptionGroup var shared: SharedTierOption

        /// What `--json` prints.
        struct Report: Encodable {
            var url: String
            var removed: [String]
            var sharedRemoved: Int
        }

        func run() async throws {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty
            else {
                throw CLIError.usage(
                    "'\(url)' is not an absolute http:// or https:// URL such as http://127.0.0.1:9000/a.png: pass the URL the proxy serves."
                )
            }
            let wanted = Self.normalized(url)
            let tier = try await shared.connect()
            defer { tier?.shutdown() }
            try await options.withSession { session in
                var report = Report(url: url, removed: [], sharedRemoved: 0)
                var keys: [String] = []
                do {
                    for try await attributes in session.cache.entries() {
                        guard let served = Self.servedURL(ofKey: attributes.key) else { continue }
                        let matches = prefix ? served.hasPrefix(wanted) : served == wanted
                        if matches { keys.append(attributes.key) }
                    }
                    for key in keys {
                        try await session.cache.removeData(forKey: key)
                        if !key.hasPrefix("serve-vary ") { report.removed.append(key) }
                    }
                } catch {
                    throw CLIError(error, while: "purging '\(url)' from \(session.directory.path)")
                }
                if let tier {
                    report.sharedRemoved = try await Self.purgeShared(tier, url: parsed, prefix: prefix)
                }
                if options.json {
                    try Output.printJSON(report)
                } else {
                    Terminal.printLine(
                        "purged \(report.removed.count) stored response(s) for \(url)"
                            + (tier == nil ? "" : ", \(report.sharedRemoved) entries from the shared tier"))
                }
                if report.removed.isEmpty, report.sharedRemoved == 0 {
                    throw CLIError.miss(
                        "Nothing was stored for \(url) in \(session.directory.path): check the URL (as clients ask for it, with the origin's scheme, host and port)."
                    )
                }
            }
        }

        /// The URL a proxy key stands for: `serve ORIGIN TARGET`, its variants (`…\n…`) and its
        /// `Vary` marker (`serve-vary serve ORIGIN TARGET`); `nil` for other keys.
        static func servedURL(ofKey key: String) -> String? {
            var key = Substring(key)
            if key.hasPrefix("serve-vary ") { key = key.dropFirst("serve-vary ".count) }
            guard key.hasPrefix("serve ") else { return nil }
            key = key.dropFirst("serve ".count)
            if let lineBreak = key.firstIndex(of: "\n") { key = key[..<lineBreak] }
            guard let space = key.firstIndex(of: " ") else { return nil }
            var origin = String(key[..<space])
            while origin.hasSuffix("/") { origin.removeLast() }
            let target = key[key.index(after: space)...]
            return normalized(origin + (target.hasPrefix("/") ? target : "/" + target))
        }

        /// A URL with its scheme and host lower-cased and the scheme's default port left out.
        static func normalized(_ text: String) -> String {
            guard var components = URLComponents(string: text) else { return text }
            components.scheme = components.scheme?.lowercased()
            components.host = components.host?.lowercased()
            if (components.scheme == "http" && components.port == 80)
                || (components.scheme == "https" && components.port == 443)
            {
                components.port = nil
            }
            if components.path.isEmpty { components.path = "/" }
            return components.string ?? text
        }

        /// Removes the URL's entries from the shared tier, for the origin spelt with and without a
        /// trailing slash (as `--origin` may have been given).
        static func purgeShared(_ tier: any SharedTier, url: URL, prefix: Bool) async throws -> Int {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return 0 }
            let target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            let query = components.percentEncodedQuery.map { "?" + $0 } ?? ""
            components.path = ""
            components.query = nil
            components.fragment = nil
            let origin = components.string ?? ""
            var removed = 0
            do {
                for spelling in [origin, origin + "/"] {
                    let base = "serve \(spelling) \(target)\(query)"
                    if prefix {
                        removed += try await tier.removeEntries(withKeyPrefix: base)
                        removed += try await tier.removeEntries(withKeyPrefix: "serve-vary " + base)
                    } else {
                        if try await tier.containsEntry(forKey: base) { removed += 1 }
                        try await tier.removeEntry(forKey: base)
                        removed += try await tier.removeEntries(withKeyPrefix: base + "\n")
                        try await tier.removeEntry(forKey: "serve-vary " + base)
                    }
                }
            } catch {
                throw CLIError(error, while: "purging '\(url.absoluteString)' from the shared tier")
            }
            return removed
        }
    }
#endif
