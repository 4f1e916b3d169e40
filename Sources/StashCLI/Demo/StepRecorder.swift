#if Tool
    import Foundation
    import Stash
    import StashHTTP

    /// Measures one step of the demo: the views' sources, what the origin served and the cache
    /// evicted meanwhile, and the cache's totals afterwards.
    final class StepRecorder {
        private let origin: GalleryOrigin
        private let evictions: Locked<Int>
        /// Every view of every step so far, for the summary's latencies.
        private(set) var allViews: [GalleryViewer.View] = []

        init(origin: GalleryOrigin, evictions: Locked<Int>) {
            self.origin = origin
            self.evictions = evictions
        }

        /// Runs `body` as step `number` and returns its report and views.
        func record(
            _ number: Int, _ name: String, cache: DiskCache, _ body: () async throws -> [GalleryViewer.View]
        ) async throws -> (DemoReport.Step, [GalleryViewer.View]) {
            let servedBefore = origin.served
            let evictionsBefore = evictions.withLock { $0 }
            let start = ContinuousClock.now
            let views = try await body()
            let elapsed = ContinuousClock.now - start
            let served = origin.served
            allViews += views
            let count = { (source: ResourceResponse.Source) in views.filter { $0.source == source }.count }
            let step = DemoReport.Step(
                number: number, name: name, views: views.count,
                originRequests: served.requests - servedBefore.requests,
                notModified: served.notModified - servedBefore.notModified, memoryHits: count(.memory),
                diskHits: count(.disk), revalidated: count(.revalidated), downloads: count(.network),
                bytesDownloaded: served.bodyBytes - servedBefore.bodyBytes,
                bytesServed: views.reduce(0) { $0 + $1.photo.size },
                evictions: evictions.withLock { $0 } - evictionsBefore, cachedCount: try cache.totalCount,
                cachedSize: try cache.totalSize.bytes, staleViews: views.filter { !$0.isCurrent }.count,
                seconds: Output.roundedMilliseconds(elapsed) / 1000)
            return (step, views)
        }
    }
#endif
