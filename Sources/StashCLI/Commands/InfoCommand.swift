#if Tool
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
            /// Whether the directory cannot be written (the cache opened read-only).
            var readOnly = false
            /// The limit the disk can hold, when it is below `sizeLimit`: the unpinned bytes plus the
            /// space left on the file system.
            var effectiveSizeLimit: Int?
            /// The last time the index was rebuilt from the value files.
            var lastIndexRebuild: DiskCache.IndexRebuild?
            var shared: SharedTierOption.Info?
        }

        /// The byte limit the disk can hold: what unpinned entries hold plus what is free, or `nil`
        /// when that is at least `limit`.
        static func diskLimit(for cache: DiskCache, limit: ByteCount) throws -> Int? {
            var info = statvfs()
            guard statvfs(cache.directory.path, &info) == 0 else { return nil }
            let available = Int(info.f_bavail) * Int(info.f_frsize)
            let holds = min(
                try cache.totalSize.bytes - cache.pinnedSize.bytes + available, cache.effectiveSizeLimit.bytes)
            return holds < limit.bytes ? holds : nil
        }

        func run() async throws {
            let report = try await options.withSession(inspecting: true) { session in
                let cache = session.cache
                do {
                    var report = Report(
                        directory: session.directory.path, sizeLimit: session.sizeLimit.bytes,
                        sizeLimitSource: session.limitSource,
                        evictionPolicy: cache.configuration.evictionPolicy.description,
                        evictionSummary: cache.configuration.evictionPolicy.summary,
                        lowWaterMark: cache.configuration.lowWaterMark, fetchPolicy: "cache-first",
                        totalCount: try cache.totalCount, totalSize: try cache.totalSize.bytes,
                        pinnedCount: try cache.pinnedCount, pinnedSize: try cache.pinnedSize.bytes,
                        diskUsage: cache.diskUsage().bytes, statistics: ToolStatistics(), hitRatio: nil)
                    report.readOnly = cache.isReadOnly
                    report.effectiveSizeLimit = try Self.diskLimit(for: cache, limit: session.sizeLimit)
                    report.lastIndexRebuild = cache.lastIndexRebuild
                    return report
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
            var rows: [[String]] = [
                ["directory", report.directory + (report.readOnly ? " (read-only: reads work, writes fail)" : "")],
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
            if let limit = report.effectiveSizeLimit {
                rows.insert(
                    [
                        "effective",
                        "\(Output.size(limit)): all the disk holds (unpinned entries plus free space); eviction keeps to it",
                    ],
                    at: 2)
            }
            if let rebuild = report.lastIndexRebuild {
                let date = ISO8601DateFormatter().string(from: rebuild.date)
                let moved = rebuild.movedTo.map { "; old index kept as \(($0 as NSString).lastPathComponent)" } ?? ""
                rows.insert(
                    [
                        "index",
                        "rebuilt from the files on \(date) (\(rebuild.reason)): \(rebuild.recovered) recovered, \(rebuild.lost) lost\(moved)",
                    ],
                    at: rows.firstIndex { $0.first == "on disk" }! + 1)
            }
            return Output.table(rows) + SharedTierOption.lines(report.shared)
        }
    }
#endif
