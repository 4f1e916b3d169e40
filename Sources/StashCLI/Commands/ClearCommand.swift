#if Tool
    import ArgumentParser
    import Foundation
    import Stash
    import StashHTTP

    /// `stash clear`: removes every entry and resets the tool's statistics.
    struct ClearCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove every entry, pinned ones included, and reset the statistics 'stash info' shows.",
            discussion: "The remembered size limit is kept."
        )

        @OptionGroup var options: CacheOptions

        /// What `--json` prints.
        struct Report: Encodable {
            var removedCount: Int
            var removedSize: Int
        }

        func run() async throws {
            let report = try await options.withSession { session in
                do {
                    let report = Report(
                        removedCount: try session.cache.totalCount, removedSize: try session.cache.totalSize.bytes)
                    try session.cache.removeAll()
                    ResourceLoader.removePartialDownloads(in: session.cache)  // interrupted downloads too
                    return report
                } catch {
                    throw CLIError(error, while: "clearing \(session.directory.path)")
                }
            }
            try ToolState.update(in: options.directory) { $0.statistics = ToolStatistics() }
            if options.json {
                try Output.printJSON(report)
            } else {
                Terminal.printLine(
                    "removed \(Output.count(report.removedCount, "entry", "entries")) (\(Output.size(report.removedSize))); statistics reset"
                )
            }
        }
    }
#endif
