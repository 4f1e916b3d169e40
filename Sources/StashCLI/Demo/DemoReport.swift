#if Tool
    import Foundation
    import StashHTTP

    /// What `stash demo` found, step by step: printed as a table, or whole with `--json`.
    struct DemoReport: Encodable {
        /// One step of the story.
        struct Step: Encodable {
            /// The step's number, from 1.
            var number: Int
            /// A one-word name: `browse`, `revisit`, `relaunch`, `revalidate`.
            var name: String
            /// Photos shown.
            var views: Int
            /// Requests the origin received during the step.
            var originRequests: Int
            /// Of those, the ones it answered `304 Not Modified`.
            var notModified: Int
            /// Photos served from the loader's memory tier.
            var memoryHits: Int
            /// Photos served from disk with no request.
            var diskHits: Int
            /// Photos served from disk after a `304`.
            var revalidated: Int
            /// Photos downloaded whole.
            var downloads: Int
            /// Body bytes the origin sent.
            var bytesDownloaded: Int
            /// Bytes of the photos shown, wherever they came from.
            var bytesServed: Int
            /// Entries the cache evicted during the step.
            var evictions: Int
            /// Entries in the cache after the step.
            var cachedCount: Int
            /// Bytes in the cache after the step.
            var cachedSize: Int
            /// Photos shown with bytes other than those the origin serves now (always 0).
            var staleViews: Int
            /// The step's duration.
            var seconds: Double
        }

        /// Totals over every step.
        struct Summary: Encodable {
            var views: Int
            var originRequests: Int
            var bytesDownloaded: Int
            var bytesServed: Int
            /// Share of views served by each tier: `memory`, `disk`, `revalidated`, `network`.
            var hitRatioByTier: [String: Double]
            /// Views served from memory or disk with no request.
            var hits: Int
            /// Views downloaded whole.
            var downloads: Int
            var medianHitMilliseconds: Double?
            var medianDownloadMilliseconds: Double?
        }

        /// The cache directory.
        var directory: String
        /// Whether the directory was a temporary one, removed at the end.
        var temporaryDirectory: Bool
        /// The origin's base URL (no longer listening once the demo ends).
        var origin: String
        /// The cache's size limit.
        var sizeLimit: Int
        /// Photos in the gallery.
        var photos: Int
        /// Bytes of all photos.
        var galleryBytes: Int
        /// The photos revisited in steps 2 to 4: those viewed last that fit the cache.
        var recentPhotos: [Int]
        /// The photos the origin changed before step 4.
        var changedPhotos: [Int]
        /// The photos step 4 downloaded again (exactly the changed ones).
        var refreshedPhotos: [Int]
        /// How long opening the cache took on relaunch.
        var relaunchOpenMilliseconds: Double
        /// The steps, in order.
        var steps: [Step]
        /// Totals.
        var summary: Summary
        /// The whole demo's duration, the origin's start and stop included.
        var seconds: Double

        /// The totals of `steps`, with latencies from `views`.
        static func summary(of steps: [Step], views: [GalleryViewer.View]) -> Summary {
            let total = max(1, views.count)
            func share(_ source: ResourceResponse.Source) -> Double {
                Double(views.filter { $0.source == source }.count) / Double(total)
            }
            let hits = views.filter { $0.source == .memory || $0.source == .disk }.map(\.latency)
            let downloads = views.filter { $0.source == .network }.map(\.latency)
            return Summary(
                views: views.count, originRequests: steps.reduce(0) { $0 + $1.originRequests },
                bytesDownloaded: steps.reduce(0) { $0 + $1.bytesDownloaded },
                bytesServed: steps.reduce(0) { $0 + $1.bytesServed },
                hitRatioByTier: [
                    "memory": share(.memory), "disk": share(.disk), "revalidated": share(.revalidated),
                    "network": share(.network),
                ],
                hits: hits.count, downloads: downloads.count,
                medianHitMilliseconds: median(hits).map(Output.roundedMilliseconds),
                medianDownloadMilliseconds: median(downloads).map(Output.roundedMilliseconds))
        }

        private static func median(_ durations: [Duration]) -> Duration? {
            guard !durations.isEmpty else { return nil }
            let sorted = durations.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }

        /// Step 5's text: a table of the steps and the totals, hit ratios and median latencies.
        var summaryLines: [String] {
            var rows = [["step", "views", "origin requests", "downloaded", "served", "memory", "disk", "304", "200"]]
            for step in steps {
                rows.append([
                    "\(step.number) \(step.name)", "\(step.views)", "\(step.originRequests)",
                    Output.size(step.bytesDownloaded), Output.size(step.bytesServed), "\(step.memoryHits)",
                    "\(step.diskHits)", "\(step.revalidated)", "\(step.downloads)",
                ])
            }
            let sum = { (value: (Step) -> Int) in "\(steps.reduce(0) { $0 + value($1) })" }
            rows.append([
                "total", "\(summary.views)", "\(summary.originRequests)", Output.size(summary.bytesDownloaded),
                Output.size(summary.bytesServed), sum(\.memoryHits), sum(\.diskHits), sum(\.revalidated),
                sum(\.downloads),
            ])
            var lines = Output.table(rows, rightAligned: Set(1..<9))
            let ratio = { (tier: String) in Output.percent(summary.hitRatioByTier[tier] ?? 0) }
            lines.append(
                "hit ratio per tier: memory \(ratio("memory")), disk \(ratio("disk")), "
                    + "revalidated (304) \(ratio("revalidated")), downloaded (200) \(ratio("network"))")
            let hit = summary.medianHitMilliseconds.map { Output.duration(.milliseconds($0)) } ?? "-"
            let download = summary.medianDownloadMilliseconds.map { Output.duration(.milliseconds($0)) } ?? "-"
            lines.append(
                "median latency: hit \(hit) (\(Output.count(summary.hits, "hit"))), "
                    + "download \(download) (\(Output.count(summary.downloads, "download")))")
            return lines
        }
    }
#endif
