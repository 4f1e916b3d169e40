#if Tool
    import ArgumentParser
    import Foundation
    import Stash
    import StashHTTP

    /// `stash trim --to SIZE`: evicts entries down to a size.
    struct TrimCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trim",
            abstract: "Evict unpinned entries, in eviction-policy order, until at most SIZE of them remain.",
            discussion: "Pinned entries are never evicted. The size limit is unchanged; set it with --size-limit."
        )

        @Option(name: .customLong("to"), help: ArgumentHelp("The size to trim to, such as 5MB.", valueName: "size"))
        var targetText: String

        @OptionGroup var options: CacheOptions

        /// What `--json` prints.
        struct Report: Encodable {
            var evictedCount: Int
            var evictedSize: Int
            var totalCount: Int
            var totalSize: Int
            var pinnedSize: Int
        }

        func validate() throws {
            _ = try CacheOptions.parseSize(targetText, option: "--to")
        }

        func run() async throws {
            let target = try CacheOptions.parseSize(targetText, option: "--to")!
            try await options.withSession { session in
                let cache = session.cache
                let report: Report
                do {
                    let (sizeBefore, countBefore) = (try cache.totalSize.bytes, try cache.totalCount)
                    try cache.trim(toSize: target)
                    ResourceLoader.removePartialDownloads(in: cache)  // and interrupted downloads
                    let (size, count) = (try cache.totalSize.bytes, try cache.totalCount)
                    report = Report(
                        evictedCount: countBefore - count, evictedSize: sizeBefore - size, totalCount: count,
                        totalSize: size, pinnedSize: try cache.pinnedSize.bytes)
                } catch {
                    throw CLIError(error, while: "trimming \(session.directory.path)")
                }
                if options.json {
                    try Output.printJSON(report)
                    return
                }
                var line =
                    "trimmed \(Output.count(report.evictedCount, "entry", "entries")) (\(Output.size(report.evictedSize))); "
                    + "\(Output.count(report.totalCount, "entry", "entries")), \(Output.size(report.totalSize)) remain"
                if report.pinnedSize > 0 { line += " (\(Output.size(report.pinnedSize)) of them pinned)" }
                Terminal.printLine(line)
            }
        }
    }
#endif
