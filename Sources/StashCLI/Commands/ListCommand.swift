#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash ls [--sort key|size|access|created] [--limit N]`: lists the entries.
    struct ListCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ls",
            abstract: "List the entries: size, key, and whether each is pinned or expired.",
            discussion: "--json adds each entry's creation, access and expiry times, content type and ETag."
        )

        /// The order of the listing.
        enum Order: String, ExpressibleByArgument, CaseIterable {
            /// Keys in byte order.
            case key
            /// Largest first.
            case size
            /// Most recently read or written first.
            case access
            /// Most recently stored first.
            case created
        }

        @Option(help: "The order: key, size (largest first), access or created (most recent first).")
        var sort: Order = .key

        @Option(help: ArgumentHelp("List at most this many entries.", valueName: "n"))
        var limit: Int?

        @OptionGroup var options: CacheOptions

        /// One entry, in `--json` output.
        struct Entry: Encodable {
            var key: String
            var size: Int
            var pinned: Bool
            var expired: Bool
            var inline: Bool
            var created: Date
            var lastAccess: Date
            var expires: Date?
            var contentType: String?
            var etag: String?
        }

        /// What `--json` prints.
        struct Report: Encodable {
            var directory: String
            var entries: [Entry]
            var totalCount: Int
            var totalSize: Int
            var pinnedCount: Int
            var pinnedSize: Int
        }

        func validate() throws {
            if let limit, limit <= 0 {
                throw ValidationError("Invalid --limit \(limit): give a positive number of entries.")
            }
        }

        func run() async throws {
            try await options.withSession(inspecting: true) { session in
                let report: Report
                do {
                    report = try await list(session)
                } catch {
                    throw CLIError(error, while: "listing \(session.directory.path)")
                }
                if options.json {
                    try Output.printJSON(report)
                    return
                }
                let rows = report.entries.map { entry -> [String] in
                    var flags: [String] = []
                    if entry.pinned { flags.append("pinned") }
                    if entry.expired { flags.append("expired") }
                    let suffix = flags.isEmpty ? "" : "  [\(flags.joined(separator: ", "))]"
                    return [Output.size(entry.size), entry.key + suffix]
                }
                for line in Output.table(rows, rightAligned: [0]) { Terminal.printLine(line) }
                var footer = "\(Output.count(report.totalCount, "entry", "entries")), \(Output.size(report.totalSize))"
                if report.pinnedCount > 0 {
                    footer += " (\(report.pinnedCount) pinned, \(Output.size(report.pinnedSize)))"
                }
                if report.entries.count < report.totalCount { footer += "; showing \(report.entries.count)" }
                Terminal.printLine(footer)
            }
        }

        private func list(_ session: CacheSession) async throws -> Report {
            let now = Date()
            var entries: [Entry] = []
            for try await attributes in session.cache.entries() {
                entries.append(
                    Entry(
                        key: attributes.key, size: attributes.size, pinned: attributes.isPinned,
                        expired: !attributes.isPinned && (attributes.expires.map { $0 <= now } ?? false),
                        inline: attributes.isInline, created: attributes.created, lastAccess: attributes.lastAccess,
                        expires: attributes.expires, contentType: attributes.metadata.contentType,
                        etag: attributes.metadata.etag))
            }
            let byKey: (Entry, Entry) -> Bool = { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            entries.sort { lhs, rhs in
                switch sort {
                case .key: return byKey(lhs, rhs)
                case .size: return lhs.size != rhs.size ? lhs.size > rhs.size : byKey(lhs, rhs)
                case .access:
                    return lhs.lastAccess != rhs.lastAccess ? lhs.lastAccess > rhs.lastAccess : byKey(lhs, rhs)
                case .created: return lhs.created != rhs.created ? lhs.created > rhs.created : byKey(lhs, rhs)
                }
            }
            let totalSize = entries.reduce(0) { $0 + $1.size }
            let pinned = entries.filter(\.pinned)
            return Report(
                directory: session.directory.path, entries: Array(entries.prefix(limit ?? .max)),
                totalCount: entries.count, totalSize: totalSize, pinnedCount: pinned.count,
                pinnedSize: pinned.reduce(0) { $0 + $1.size })
        }
    }
#endif
