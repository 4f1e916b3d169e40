#if Serve
    import Foundation
    import Testing

    /// `stash serve` answers a client's own conditional requests from a fresh stored response, and
    /// covers origin failures with a stale one where `stale-if-error` allows it.
    @Suite(.serialized)
    struct ServeConditionalTests {
        static let lastModified = "Tue, 24 Nov 2026 10:00:00 GMT"
        static let validated = Origin.Reply(
            headers: [
                ("Cache-Control", "max-age=600"), ("ETag", "\"v1\""), ("Last-Modified", lastModified),
                ("Content-Type", "text/plain"), ("X-Extra", "1"),
            ], body: Data("hello".utf8))

        /// RFC 9111 §4.3.2 and RFC 9110 §13.1.2: `If-None-Match` naming the stored `ETag` (weakly
        /// compared, in a list, or `*`) gets a `304` from the cache, with the `ETag` and no body
        /// or content metadata (RFC 9110 §15.4.5); another tag gets the stored `200`.
        @Test func ifNoneMatchIsAnsweredFromAFreshStoredResponse() async throws {
            try await withProxy { origin, proxy in
                origin.set("/e", Self.validated)
                _ = try await RawHTTP.request(port: proxy.port, "/e")
                for value in ["\"v1\"", "W/\"v1\"", "\"other\", \"v1\"", "*"] {
                    let response = try await RawHTTP.request(
                        port: proxy.port, "/e", headers: [("If-None-Match", value)])
                    #expect(response.status == 304, "If-None-Match: \(value)")
                    #expect(response.header("etag") == "\"v1\"")
                    #expect(response.header("cache-control") == "max-age=600")
                    #expect(response.header("age") != nil)
                    #expect(response.header("content-type") == nil)
                    #expect(response.header("x-extra") == nil)
                    #expect(response.body.isEmpty)
                }
                let other = try await RawHTTP.request(port: proxy.port, "/e", headers: [("If-None-Match", "\"v2\"")])
                #expect(other.status == 200)
                #expect(other.text == "hello")
                #expect(origin.count("/e") == 1)
            }
        }

        /// RFC 9111 §4.3.2: a body that lives in the disk tier (too large for a 256 KiB memory tier)
        /// answers a matching `If-None-Match` with `304` too, without the origin.
        @Test func ifNoneMatchIsAnsweredFromTheDiskTier() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(["--dir", directory.path, "--memory-limit", "256KiB"]) { origin, proxy in
                var reply = Self.validated
                reply.body = Data(repeating: 7, count: 100_000)
                origin.set("/large", reply)
                _ = try await RawHTTP.request(port: proxy.port, "/large")
                let response = try await RawHTTP.request(
                    port: proxy.port, "/large", headers: [("If-None-Match", "\"v1\"")])
                #expect(response.status == 304)
                #expect(response.header("etag") == "\"v1\"")
                #expect(response.body.isEmpty)
                let full = try await RawHTTP.request(port: proxy.port, "/large")
                #expect(full.body == reply.body)
                #expect(origin.count("/large") == 1)
            }
        }

        /// RFC 9111 §4.3.2 and RFC 9110 §13.1.3: `If-Modified-Since` at or after the stored
        /// `Last-Modified` gets a `304`, an earlier date the `200`; `If-None-Match` takes precedence
        /// over it (RFC 9110 §13.2.2), and an invalid date is ignored.
        @Test func ifModifiedSinceIsAnsweredFromTheStoredLastModified() async throws {
            try await withProxy { origin, proxy in
                origin.set("/m", Self.validated)
                _ = try await RawHTTP.request(port: proxy.port, "/m")
                func status(_ headers: [(String, String)]) async throws -> Int {
                    try await RawHTTP.request(port: proxy.port, "/m", headers: headers).status
                }
                #expect(try await status([("If-Modified-Since", Self.lastModified)]) == 304)
                #expect(try await status([("If-Modified-Since", "Wednesday, 25-Nov-26 10:00:00 GMT")]) == 304)
                #expect(try await status([("If-Modified-Since", "Mon, 23 Nov 2026 10:00:00 GMT")]) == 200)
                #expect(try await status([("If-Modified-Since", "not a date")]) == 200)
                #expect(
                    try await status([
                        ("If-None-Match", "\"v2\""), ("If-Modified-Since", "Wed, 25 Nov 2026 10:00:00 GMT"),
                    ]) == 200)
                #expect(origin.count("/m") == 1)
            }
        }

        /// RFC 5861 §4: when revalidating a stale response meets an origin `5xx`, the stale response
        /// is served while within its `stale-if-error`; beyond it, or with `must-revalidate` (RFC 9111
        /// §4.2.4), the origin's error is relayed.
        @Test func staleIfErrorCoversAnOriginErrorWithinItsWindow() async throws {
            try await withProxy { origin, proxy in
                // `Age: 100` against `max-age=60`: stored 40 s stale at once, so no waiting.
                func failing(after first: String, cacheControl: String) -> Origin.Route {
                    { _, count in
                        count == 1
                            ? Origin.Reply(
                                headers: [("Cache-Control", cacheControl), ("Age", "100")], body: Data(first.utf8))
                            : Origin.Reply(status: 503, body: Data("down".utf8))
                    }
                }
                origin.route("/within", failing(after: "kept", cacheControl: "max-age=60, stale-if-error=600"))
                origin.route("/beyond", failing(after: "old", cacheControl: "max-age=60, stale-if-error=10"))
                origin.route(
                    "/strict", failing(after: "old", cacheControl: "max-age=60, stale-if-error=600, must-revalidate"))
                for path in ["/within", "/beyond", "/strict"] {
                    #expect(try await RawHTTP.request(port: proxy.port, path).status == 200)
                }
                let within = try await RawHTTP.request(port: proxy.port, "/within")
                #expect(within.status == 200)
                #expect(within.text == "kept")
                #expect(try #require(within.header("age").flatMap { Int($0) }) >= 100)
                let beyond = try await RawHTTP.request(port: proxy.port, "/beyond")
                #expect(beyond.status == 503)
                #expect(beyond.text == "down")
                #expect(try await RawHTTP.request(port: proxy.port, "/strict").status == 503)
                // A request's own stale-if-error widens the window for that request (RFC 5861 §4).
                let widened = try await RawHTTP.request(
                    port: proxy.port, "/beyond", headers: [("Cache-Control", "stale-if-error=3600")])
                #expect(widened.status == 200)
                #expect(widened.text == "old")
                #expect(origin.count("/within") == 2)
                #expect(origin.count("/beyond") == 3)
            }
        }

        /// RFC 5861 §4: an origin that cannot be reached is an error too; the stale response is
        /// served, and the access log says `STALE`.
        @Test func staleIfErrorCoversAnUnreachableOrigin() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "serve-stale-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let log = directory.appendingPathComponent("access.log").path
            try await withProxy(["--access-log", log]) { origin, proxy in
                origin.set(
                    "/gone",
                    Origin.Reply(
                        headers: [("Cache-Control", "max-age=60, stale-if-error=600"), ("Age", "100")],
                        body: Data("last known".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/gone")
                await origin.stop()
                let started = ContinuousClock.now
                let response = try await RawHTTP.request(port: proxy.port, "/gone")
                #expect(response.status == 200)
                #expect(response.text == "last known")
                // A refused connection fails at once, not after the 10 s connect timeout.
                #expect(ContinuousClock.now - started < .seconds(5))
                await proxy.stop()
                let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                #expect(lines.last?.hasSuffix(" 200 10 STALE") == true)
            }
        }
    }
#endif
