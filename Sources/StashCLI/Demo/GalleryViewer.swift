#if Tool
    import Foundation
    import StashHTTP

    /// Views photos through a ``StashHTTP/ResourceLoader`` the way a gallery screen does: several
    /// at once, each checked against the bytes the origin serves now.
    struct GalleryViewer {
        /// One photo shown.
        struct View: Sendable {
            /// The photo.
            var photo: Gallery.Photo
            /// Where the loader found it.
            var source: ResourceResponse.Source
            /// How long the photo took to appear.
            var latency: Duration
            /// Whether the bytes shown are those the origin serves now.
            var isCurrent: Bool
            /// When the response arrived, counted from 1 across the viewer's lifetime.
            var order: Int
        }

        let loader: ResourceLoader
        let gallery: Gallery
        let origin: GalleryOrigin
        /// How many photos load at once.
        var concurrency = 6
        private let responses = Locked(0)

        /// Views `photos` with `policy` and returns the views in the order the responses arrived,
        /// which is the order in which the cache last touched the photos.
        ///
        /// - Parameter onProgress: Called with the bytes of the photos shown so far, after each one.
        func view(
            _ photos: [Gallery.Photo], policy: ResourceLoader.CachePolicy, onProgress: (Int) -> Void = { _ in }
        ) async throws -> [View] {
            try await withThrowingTaskGroup(of: View.self) { group in
                var pending = photos[...]
                var views: [View] = []
                var bytes = 0
                func startNext() {
                    guard let photo = pending.popFirst() else { return }
                    group.addTask { try await view(photo, policy: policy) }
                }
                for _ in 0..<concurrency { startNext() }
                while let view = try await group.next() {
                    views.append(view)
                    bytes += view.photo.size
                    onProgress(bytes)
                    startNext()
                }
                return views.sorted { $0.order < $1.order }
            }
        }

        private func view(_ photo: Gallery.Photo, policy: ResourceLoader.CachePolicy) async throws -> View {
            let start = ContinuousClock.now
            let response = try await loader.response(for: ResourceRequest(origin.url(of: photo), cachePolicy: policy))
            let latency = ContinuousClock.now - start
            // Taken right after the loader's last cache access for this photo, so that the order of
            // views is the cache's recency order (checking the bytes below takes a while).
            let order = responses.withLock {
                $0 += 1
                return $0
            }
            let current = gallery.body(of: photo, version: origin.version(of: photo))
            return View(
                photo: photo, source: response.source, latency: latency, isCurrent: response.data == current,
                order: order)
        }
    }
#endif
