import ArgumentParser
import Foundation
import Stash

/// `stash info`: the directory, its limits, totals, hit statistics and policies.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the cache's location, size limit, totals, hit statistics and policies.",
        discussion: """
            The statistics count what stash commands did in this directory ('get' and 'fetch'), kept in \
            stash-tool.json beside the index; programs that use the library keep their own counters.
            """
    )

    @OptionGroup var options: CacheOptions
    @OptionGroup var shared: SharedTierOption

    /// What `--json` prints.
    struct Report: Encodable {
        var directory: String
        var sizeLimit: Int
        var sizeLimitSource: CacheSession.LimitSource
        var evictionPolicy: String
        var evictionSummary: String
        var lowWaterMark: Double
        var fetchPolicy: String
        var totalCount: Int
        var totalSize: Int
        var pinnedCount: Int
        var pinnedSize: Int
        var diskUsage: Int
        var statistics: ToolStatistics
        var hitRatio: Double?
        var shared: SharedTierOption.Info?
    }

    func run() async throws {
        let report = try await options.withSession { session in
            let cache = session.cache
            do {
                return Report(
                    directory: session.directory.path, sizeLimit: session.sizeLimit.bytes,
                    sizeLimitSource: session.limitSource,
                    evictionPolicy: cache.configuration.evictionPolicy.description,
                    evictionSummary: cache.configuration.evictionPolicy.summary,
                    lowWaterMark: cache.configuration.lowWaterMark, fetchPolicy: "cache-first",
                    totalCount: try cache.totalCount, totalSize: try cache.totalSize.bytes,
                    pinnedCount: try cache.pinnedCount, pinnedSize: try cache.pinnedSize.bytes,
                    diskUsage: cache.diskUsage().bytes, statistics: ToolStatistics(), hitRatio: nil)
            } catch {
                throw CLIError(error, while: "reading \(session.directory.path)")
            }
        }
        var completed = report
        // Read after the session closed, so that a limit given on this command line is included.
        completed.statistics = try ToolState.load(from: options.directory).statistics
        completed.hitRatio = completed.statistics.hitRatio
        let sharedTier = try await shared.connect()
        completed.shared = await SharedTierOption.info(sharedTier)
        sharedTier?.shutdown()
        if options.json {
            try Output.printJSON(completed)
        } else {
            for line in Self.lines(completed) { Terminal.printLine(line) }
        }
    }

    /// The human form of `report`.
    static func lines(_ report: Report) -> [String] {
        let source =
            switch report.sizeLimitSource {
            case .option: "set with --size-limit; remembered for this directory"
            case .remembered: "remembered for this directory"
            case .default: "the default; set one with --size-limit"
            }
        let stats = report.statistics
        var entries = "\(report.totalCount), \(Output.size(report.totalSize))"
        if report.pinnedCount > 0 {
            entries += " (\(report.pinnedCount) pinned, \(Output.size(report.pinnedSize)), never evicted)"
        }
        let ratio =
            stats.hitRatio.map {
                "\(Output.percent($0)) (\(stats.hits) of \(stats.hits + stats.misses) reads served from the cache)"
            } ?? "no reads yet"
        let rows: [[String]] = [
            ["directory", report.directory],
            ["size limit", "\(Output.size(report.sizeLimit)) of unpinned values (\(source))"],
            [
                "eviction",
                "\(report.evictionPolicy) (\(report.evictionSummary)), down to \(Output.percent(report.lowWaterMark)) of the limit when it is exceeded",
            ],
            ["entries", entries],
            ["on disk", "\(Output.size(report.diskUsage)) (index and files, rounded to blocks)"],
            [
                "fetch policy",
                "\(report.fetchPolicy): a cached URL is served with no request (fetch --policy http revalidates, --policy reload downloads again)",
            ],
            ["statistics", "of stash commands in this directory (programs using the library keep their own)"],
            ["", "get: \(Output.count(stats.getHits, "hit")), \(Output.count(stats.getMisses, "miss", "misses"))"],
            [
                "",
                "fetch: \(Output.count(stats.memoryHits, "memory hit")), \(Output.count(stats.diskHits, "disk hit")), "
                    + "\(stats.revalidated) revalidated, "
                    + "\(Output.count(stats.downloads, "download")) (\(Output.size(stats.bytesDownloaded))), "
                    + "\(Output.count(stats.fetchFailures, "failure"))",
            ],
            ["", "served from the cache: \(Output.size(stats.bytesServed)); evictions: \(stats.evictions)"],
            ["hit ratio", ratio],
        ]
        return Output.table(rows) + SharedTierOption.lines(report.shared)
    }
}
