#if Tool
    import Foundation
    import Stash
    import StashHTTP

    /// The story `stash demo` plays: browse a gallery through a small cache, revisit, relaunch,
    /// let the origin change some photos, and sum up — printing a short report at each step.
    struct DemoStory {
        /// The photos.
        let gallery: Gallery
        /// The cache directory (empty at the start).
        let directory: URL
        /// Whether the directory is a temporary one that the command removes afterwards.
        let isTemporary: Bool
        /// The cache's size limit.
        let sizeLimit: ByteCount
        /// How many of the recently viewed photos the origin changes before step 4.
        let changes: Int
        /// Whether to print each step's report as text.
        let printsText: Bool

        /// The share of the limit that the revisited photos may fill, so that storing the new
        /// versions of step 4 evicts other photos rather than ones still to be revalidated.
        static let revisitBudget = 0.8
        /// The most photos revisited: a "recently viewed" strip.
        static let revisitLimit = 30

        /// Starts the origin, plays the story, and stops the origin whatever happens.
        func run() async throws -> DemoReport {
            let start = ContinuousClock.now
            let origin = try await GalleryOrigin.start(serving: gallery)
            do {
                var report = try await play(origin)
                await origin.stop()
                report.seconds = Output.roundedMilliseconds(ContinuousClock.now - start) / 1000
                return report
            } catch {
                await origin.stop()
                throw error
            }
        }

        private func say(_ lines: String...) {
            guard printsText else { return }
            for line in lines { Terminal.printLine(line) }
        }

        private func play(_ origin: GalleryOrigin) async throws -> DemoReport {
            let evictions = Locked(0)
            var configuration = DiskCache.Configuration(sizeLimit: sizeLimit)
            configuration.onEviction = { _ in evictions.withLock { $0 += 1 } }
            let recorder = StepRecorder(origin: origin, evictions: evictions)
            say(
                "Stash demo: a photo gallery on an origin server at \(origin.baseURL), cached in \(directory.path)",
                "")

            // 1. Browse everything: far more than fits.
            var cache = try DiskCache(directory: directory, configuration: configuration)
            var viewer = GalleryViewer(loader: ResourceLoader(cache: cache), gallery: gallery, origin: origin)
            say(
                "1. Browse the gallery: \(gallery.photos.count) photos (20 KiB to 2 MiB, \(Output.size(gallery.totalSize)) in all) through a cache limited to \(sizeLimit)"
            )
            let bar = ProgressBar(label: "   browsing", delay: .zero, isEnabled: Terminal.isStandardErrorATerminal)
            let (browse, browsed) = try await recorder.record(1, "browse", cache: cache) {
                try await viewer.view(gallery.photos, policy: .cacheFirst) { bytes in
                    bar.update(TransferProgress(bytesReceived: bytes, bytesExpected: gallery.totalSize))
                }
            }
            bar.finish()
            say(
                "   \(Output.count(browse.downloads, "download")), \(Output.size(browse.bytesDownloaded)) from the origin in \(Output.duration(.seconds(browse.seconds)))",
                "   \(Output.count(browse.evictions, "photo")) evicted on the way; the cache holds \(Output.count(browse.cachedCount, "photo")), \(Output.size(browse.cachedSize)) of \(sizeLimit)"
                    + (browse.cachedSize <= sizeLimit.bytes ? " (within the limit)" : " (OVER THE LIMIT)"),
                "")

            // 2. Browse again: the photos viewed last that the cache kept.
            let recent = try recentlyViewed(browsed, in: cache, origin: origin)
            let recentBytes = recent.reduce(0) { $0 + $1.size }
            say(
                "2. Browse again: the \(Output.count(recent.count, "photo")) viewed last that the cache kept (\(Output.size(recentBytes)), at most \(Self.revisitLimit) and \(Output.percent(Self.revisitBudget)) of the limit)"
            )
            let (revisit, _) = try await recorder.record(2, "revisit", cache: cache) {
                try await viewer.view(recent, policy: .cacheFirst)
            }
            say(
                "   \(revisit.memoryHits + revisit.diskHits) served from the cache (\(revisit.memoryHits) from memory, \(revisit.diskHits) from disk) in \(Output.duration(.seconds(revisit.seconds)))",
                "   origin requests: \(revisit.originRequests)",
                "   (the \(browse.evictions) evicted photos would be downloaded again: which photos stay within \(sizeLimit) is the \(configuration.evictionPolicy) eviction policy's choice)",
                "")

            // 3. Relaunch: a new cache object and loader over the same directory.
            cache.close()
            let openStart = ContinuousClock.now
            cache = try DiskCache(directory: directory, configuration: configuration)
            let openTime = ContinuousClock.now - openStart
            viewer = GalleryViewer(loader: ResourceLoader(cache: cache), gallery: gallery, origin: origin)
            say(
                "3. Relaunch: a new cache and loader over the same directory (opened in \(Output.duration(openTime))); revisit the same photos"
            )
            let (relaunch, _) = try await recorder.record(3, "relaunch", cache: cache) {
                try await viewer.view(recent, policy: .cacheFirst)
            }
            say(
                "   \(relaunch.memoryHits + relaunch.diskHits) served from the cache (\(relaunch.memoryHits) from memory, \(relaunch.diskHits) from disk) in \(Output.duration(.seconds(relaunch.seconds)))",
                "   origin requests: \(relaunch.originRequests)",
                "")

            // 4. The origin changes some of them; HTTP revalidation finds exactly those.
            let changed = stride(from: 0, to: recent.count, by: max(1, recent.count / max(1, changes)))
                .prefix(changes).map { recent[$0] }
            origin.publishNewVersions(of: changed)
            let changedIDs = changed.map(\.id).sorted()
            say(
                "4. The origin publishes new versions of \(Output.count(changed.count, "photo")) (\(Self.list(changedIDs))); revisit with the .http policy (ETag, Cache-Control: no-cache)"
            )
            let (revalidate, revalidated) = try await recorder.record(4, "revalidate", cache: cache) {
                try await viewer.view(recent, policy: .http)
            }
            let refreshedIDs = revalidated.filter { $0.source == .network }.map(\.photo.id).sorted()
            say(
                "   \(revalidate.originRequests) conditional requests: \(revalidate.notModified) answered 304 Not Modified (no body), \(revalidate.downloads) answered 200 with a new photo (\(Output.size(revalidate.bytesDownloaded)))",
                refreshedIDs == changedIDs
                    ? "   the photos downloaded again are exactly the changed ones; every photo shown matches the origin"
                    : "   MISMATCH: downloaded again \(Self.list(refreshedIDs)), changed \(Self.list(changedIDs))",
                "")
            cache.close()

            let steps = [browse, revisit, relaunch, revalidate]
            let report = DemoReport(
                directory: directory.path, temporaryDirectory: isTemporary, origin: origin.baseURL,
                sizeLimit: sizeLimit.bytes, photos: gallery.photos.count, galleryBytes: gallery.totalSize,
                recentPhotos: recent.map(\.id), changedPhotos: changedIDs, refreshedPhotos: refreshedIDs,
                relaunchOpenMilliseconds: Output.roundedMilliseconds(openTime), steps: steps,
                summary: DemoReport.summary(of: steps, views: recorder.allViews), seconds: 0)
            say("5. Summary")
            for line in report.summaryLines { say("   " + line) }
            return report
        }

        /// The photos shown last in `views` that the cache still holds, newest first until their
        /// bytes would pass ``revisitBudget`` of the limit or there are ``revisitLimit`` of them,
        /// returned oldest first.
        ///
        /// Which photos a full cache keeps is the eviction policy's choice (the default weighs how
        /// often a photo was requested, not only how recently), so the demo asks the cache rather
        /// than assuming least-recently-used order.
        private func recentlyViewed(_ views: [GalleryViewer.View], in cache: DiskCache, origin: GalleryOrigin) throws
            -> [Gallery.Photo]
        {
            var recent: [Gallery.Photo] = []
            var bytes = 0
            for view in views.reversed() where recent.count < Self.revisitLimit {
                guard Double(bytes + view.photo.size) <= Self.revisitBudget * Double(sizeLimit.bytes) else { continue }
                guard try cache.containsData(forKey: origin.url(of: view.photo).absoluteString) else { continue }
                recent.append(view.photo)
                bytes += view.photo.size
            }
            return recent.reversed()
        }

        private static func list(_ ids: [Int]) -> String {
            ids.isEmpty ? "none" : ids.map { "#\($0)" }.joined(separator: ", ")
        }
    }
#endif
