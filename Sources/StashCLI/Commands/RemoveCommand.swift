#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash rm KEY…`: removes entries.
    struct RemoveCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove the entries stored under one or more keys, pinned ones included.",
            discussion: "Exits with status 1 when one of the keys was not cached (the others are still removed)."
        )

        @Argument(help: "The keys, exactly as stored.")
        var keys: [String] = []

        @OptionGroup var options: CacheOptions

        /// One removed entry, in `--json` output.
        struct Removed: Encodable {
            var key: String
            var size: Int
        }

        /// What `--json` prints.
        struct Report: Encodable {
            var removed: [Removed]
            var missing: [String]
        }

        func validate() throws {
            if keys.isEmpty { throw ValidationError("Name at least one key to remove, such as 'stash rm photo-42'.") }
        }

        func run() async throws {
            try await options.withSession { session in
                var report = Report(removed: [], missing: [])
                for key in keys {
                    do {
                        guard let attributes = try session.cache.attributes(forKey: key) else {
                            report.missing.append(key)
                            continue
                        }
                        try session.cache.removeData(forKey: key)
                        report.removed.append(Removed(key: key, size: attributes.size))
                    } catch {
                        throw CLIError(error, while: "removing '\(key)'")
                    }
                }
                if options.json {
                    try Output.printJSON(report)
                } else {
                    for removed in report.removed {
                        Terminal.printLine("removed '\(removed.key)' (\(Output.size(removed.size)))")
                    }
                }
                if !report.missing.isEmpty {
                    let list = report.missing.map { "'\($0)'" }.joined(separator: ", ")
                    throw CLIError.miss(
                        "No entry under \(list) in \(session.directory.path), so nothing was removed for it: list the keys with 'stash ls'."
                    )
                }
            }
        }
    }
#endif
