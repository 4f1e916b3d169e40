#if Tool
    import FlyingFox
    import FlyingSocks
    import Foundation

    /// The demo's origin server: a FlyingFox HTTP server on 127.0.0.1 that serves the gallery's
    /// photos with an ETag and `Cache-Control: no-cache`, answers `If-None-Match` with
    /// `304 Not Modified`, lets the demo publish new versions, and counts what it serves.
    final class GalleryOrigin: Sendable {
        /// What the origin has served.
        struct Counters: Sendable, Equatable {
            /// Requests received.
            var requests = 0
            /// Requests answered `304 Not Modified`.
            var notModified = 0
            /// Requests answered `200 OK` with a photo.
            var fullResponses = 0
            /// Body bytes of those responses.
            var bodyBytes = 0
        }

        /// The port the server listens on.
        let port: UInt16
        private let gallery: Gallery
        private let versions: Locked<[Int: Int]>
        private let counters: Locked<Counters>
        private let http: HTTPServer
        private let runTask: Task<Void, any Error>

        private init(
            gallery: Gallery, versions: Locked<[Int: Int]>, counters: Locked<Counters>, http: HTTPServer,
            runTask: Task<Void, any Error>, port: UInt16
        ) {
            self.gallery = gallery
            self.versions = versions
            self.counters = counters
            self.http = http
            self.runTask = runTask
            self.port = port
        }

        /// Starts serving `gallery` on 127.0.0.1, on a port the system picks.
        ///
        /// Binds an IPv4 address explicitly: FlyingFox's `.loopback(port:)` listens on IPv6 only.
        static func start(serving gallery: Gallery) async throws -> GalleryOrigin {
            let versions = Locked([Int: Int]())
            let counters = Locked(Counters())
            let handler = PhotoHandler(gallery: gallery, versions: versions, counters: counters)
            let http = HTTPServer(
                address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 30, logger: .disabled, handler: handler)
            let runTask = Task { try await http.run() }
            do {
                try await http.waitUntilListening()
                guard case .ip4(_, let port) = await http.listeningAddress else {
                    throw CLIError.io("The demo's origin server did not report an IPv4 port.")
                }
                return GalleryOrigin(
                    gallery: gallery, versions: versions, counters: counters, http: http, runTask: runTask, port: port)
            } catch {
                await http.stop(timeout: 0)
                runTask.cancel()
                throw error
            }
        }

        /// Stops listening, closes every connection, and waits until the server has finished.
        func stop() async {
            await http.stop(timeout: 0)
            runTask.cancel()
            _ = await runTask.result
        }

        /// The URL of `photo` on this origin.
        func url(of photo: Gallery.Photo) -> URL {
            URL(string: "http://127.0.0.1:\(port)\(photo.path)")!
        }

        /// The base URL, for reports.
        var baseURL: String { "http://127.0.0.1:\(port)" }

        /// What the origin has served so far.
        var served: Counters { counters.withLock { $0 } }

        /// The version of `photo` the origin serves now (1 until changed).
        func version(of photo: Gallery.Photo) -> Int {
            versions.withLock { $0[photo.id] ?? 1 }
        }

        /// Publishes a new version of each of `photos`: new bytes, new ETag, same size.
        func publishNewVersions(of photos: [Gallery.Photo]) {
            versions.withLock { versions in
                for photo in photos { versions[photo.id] = (versions[photo.id] ?? 1) + 1 }
            }
        }

        /// Answers `GET /photos/N.jpg`.
        private struct PhotoHandler: HTTPHandler {
            let gallery: Gallery
            let versions: Locked<[Int: Int]>
            let counters: Locked<Counters>

            func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
                counters.withLock { $0.requests += 1 }
                let name = request.path.split(separator: "/").last.map(String.init) ?? ""
                guard request.path.hasPrefix("/photos/"), name.hasSuffix(".jpg"), let id = Int(name.dropLast(4)),
                    let photo = gallery.photo(id)
                else {
                    return HTTPResponse(statusCode: .notFound)
                }
                let version = versions.withLock { $0[id] ?? 1 }
                let etag = "\"\(id)-v\(version)\""
                var headers = HTTPHeaders()
                headers[.eTag] = etag
                // Every use revalidates under HTTP caching, so a changed photo is never served stale.
                headers[.cacheControl] = "no-cache"
                if request.headers[.ifNoneMatch] == etag {
                    counters.withLock { $0.notModified += 1 }
                    return HTTPResponse(statusCode: .notModified, headers: headers)
                }
                headers[.contentType] = "image/jpeg"
                let body = gallery.body(of: photo, version: version)
                counters.withLock {
                    $0.fullResponses += 1
                    $0.bodyBytes += body.count
                }
                return HTTPResponse(statusCode: .ok, headers: headers, body: body)
            }
        }
    }
#endif
