#if Serve
    import Foundation
    import Testing

    /// `206 (Partial Content)` responses from the origin, stored and combined (RFC 9111 §3.3, §3.4;
    /// RFC 9110 §14, §15.3.7).
    ///
    /// The origin answers `Range` itself (``RangeServer``); `--range-fetch-limit 1KiB` keeps the proxy
    /// from fetching the 4 KiB body whole, so that ranges reach the origin and come back as `206`s.
    @Suite(.serialized)
    struct ServePartialTests {
        static let body = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 8) })
        static let limit = ["--range-fetch-limit", "1KiB"]

        /// RFC 9111 §3.3: a stored `206` answers a later range wholly within it, and several such
        /// ranges (RFC 9110 §14.6), with the stored fields, `Age` and `Via` (§3.4, §4.1) and no
        /// origin request.
        @Test func storedPieceAnswersACoveredRange() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                let server = RangeServer(body: Self.body, etag: "\"v1\"")
                origin.route("/p", server.route)
                let first = try await RawHTTP.request(port: proxy.port, "/p", headers: [("Range", "bytes=100-1099")])
                #expect(first.status == 206)
                #expect(first.body == Self.body[100...1099])
                let asked = origin.count("/p")
                let inside = try await RawHTTP.request(port: proxy.port, "/p", headers: [("Range", "bytes=200-299")])
                #expect(inside.status == 206)
                #expect(inside.body == Self.body[200...299])
                #expect(inside.header("content-range") == "bytes 200-299/4096")
                #expect(inside.header("content-length") == "100")
                #expect(inside.header("etag") == "\"v1\"")
                #expect(inside.header("x-origin") == "range-server")
                #expect(inside.header("age") != nil)
                #expect(inside.header("via") != nil)
                let several = try await RawHTTP.request(
                    port: proxy.port, "/p", headers: [("Range", "bytes=100-109,1090-1099")])
                #expect(several.status == 206)
                #expect(several.header("content-type")?.hasPrefix("multipart/byteranges") == true)
                #expect(several.body.range(of: Self.body[1090...1099]) != nil)
                #expect(origin.count("/p") == asked)
            }
        }

        /// RFC 9111 §3.3: a range that is not wholly within the stored piece goes to the origin, with
        /// the client's own `Range` once the piece says the response is too long to fetch whole.
        @Test func uncoveredRangeGoesToTheOrigin() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                origin.route("/u", RangeServer(body: Self.body, etag: "\"v1\"").route)
                _ = try await RawHTTP.request(port: proxy.port, "/u", headers: [("Range", "bytes=100-1099")])
                let asked = origin.count("/u")
                for range in ["bytes=2000-2099", "bytes=1000-1199"] {
                    let before = origin.count("/u")
                    let response = try await RawHTTP.request(port: proxy.port, "/u", headers: [("Range", range)])
                    #expect(response.status == 206)
                    #expect(origin.count("/u") == before + 1, "\(range)")
                    #expect(origin.requests("/u").last?.header("range") == range)
                }
                #expect(origin.count("/u") == asked + 2)
            }
        }

        /// RFC 9111 §3.4, RFC 9110 §15.3.7.3: two pieces with the same strong validator that together
        /// hold the whole representation become a complete stored `200`: a plain `GET` and any range
        /// are then answered with no origin request, from memory and, after a restart, from disk.
        @Test func piecesCombineIntoACompleteResponse() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-partial-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let origin = try await Origin.start()
            defer { Task { await origin.stop() } }
            origin.route("/c", RangeServer(body: Self.body, etag: "\"v1\"").route)
            let arguments = ["--origin", origin.url, "--dir", directory.path] + Self.limit
            let proxy = try await ServeProcess.start(arguments)
            do {
                let head = try await RawHTTP.request(port: proxy.port, "/c", headers: [("Range", "bytes=0-2047")])
                let tail = try await RawHTTP.request(port: proxy.port, "/c", headers: [("Range", "bytes=2048-")])
                #expect(head.body == Self.body[0...2047])
                #expect(tail.body == Self.body[2048...])
                let asked = origin.count("/c")
                let whole = try await RawHTTP.request(port: proxy.port, "/c")
                #expect(whole.status == 200)
                #expect(whole.body == Self.body)
                #expect(whole.header("content-range") == nil)
                #expect(origin.count("/c") == asked)
            }
            await proxy.stop()
            let restarted = try await ServeProcess.start(arguments)
            do {
                let asked = origin.count("/c")
                let whole = try await RawHTTP.request(port: restarted.port, "/c")
                #expect(whole.status == 200)
                #expect(whole.body == Self.body)
                let range = try await RawHTTP.request(port: restarted.port, "/c", headers: [("Range", "bytes=4000-")])
                #expect(range.body == Self.body[4000...])
                #expect(origin.count("/c") == asked)
            }
            await restarted.stop()
        }

        /// RFC 9111 §3.4: a piece with another validator is not combined with the stored ones but
        /// replaces them: the old piece's bytes are asked for again, the new piece's are not.
        @Test func pieceWithAnotherValidatorReplacesTheStoredOnes() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                let server = RangeServer(body: Self.body, etag: "\"v1\"")
                origin.route("/v", server.route)
                _ = try await RawHTTP.request(port: proxy.port, "/v", headers: [("Range", "bytes=0-2047")])
                server.etag.withLock { $0 = "\"v2\"" }
                _ = try await RawHTTP.request(port: proxy.port, "/v", headers: [("Range", "bytes=2048-")])
                let asked = origin.count("/v")
                let newer = try await RawHTTP.request(port: proxy.port, "/v", headers: [("Range", "bytes=3000-3099")])
                #expect(newer.header("etag") == "\"v2\"")
                #expect(origin.count("/v") == asked)
                let older = try await RawHTTP.request(port: proxy.port, "/v", headers: [("Range", "bytes=0-99")])
                #expect(older.header("etag") == "\"v2\"")
                #expect(origin.count("/v") == asked + 1)
            }
        }

        /// RFC 9110 §8.8.1, RFC 9111 §3.4: a `206` with a weak validator is relayed, not stored; the
        /// same range is asked for again.
        @Test func weakValidatorIsNotStored() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                origin.route("/w", RangeServer(body: Self.body, etag: "W/\"w1\"").route)
                let first = try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=0-99")])
                #expect(first.status == 206)
                let asked = origin.count("/w")
                let again = try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=0-99")])
                #expect(again.status == 206)
                #expect(again.body == Self.body[0...99])
                #expect(origin.count("/w") > asked)
                #expect(origin.requests("/w").last?.header("range") == "bytes=0-99")
            }
        }

        /// RFC 9111 §3.3: partial content never answers a request without `Range`.
        ///
        /// With one run
        /// missing, the proxy asks for that run with `If-Range` and serves the combined `200`; with
        /// two, the request goes to the origin as it is.
        @Test func noPartialContentForARequestWithoutRange() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                origin.route("/n", RangeServer(body: Self.body, etag: "\"v1\"").route)
                _ = try await RawHTTP.request(port: proxy.port, "/n", headers: [("Range", "bytes=0-2047")])
                let asked = origin.count("/n")
                let completed = try await RawHTTP.request(port: proxy.port, "/n")
                #expect(completed.status == 200)
                #expect(completed.body == Self.body)
                #expect(origin.count("/n") == asked + 1)
                #expect(origin.requests("/n").last?.header("range") == "bytes=2048-")
                #expect(origin.requests("/n").last?.header("if-range") == "\"v1\"")

                origin.route("/g", RangeServer(body: Self.body, etag: "\"v1\"").route)
                _ = try await RawHTTP.request(port: proxy.port, "/g", headers: [("Range", "bytes=1000-1999")])
                let whole = try await RawHTTP.request(port: proxy.port, "/g")
                #expect(whole.status == 200)
                #expect(whole.body == Self.body)
                #expect(origin.requests("/g").last?.header("range") == nil)
            }
        }
    }

    extension ServePartialTests {
        /// RFC 9111 §3.3: a plain request that waits for another fill of its URL (here a range
        /// request held at the origin) completes the stored partial content when that fill stored
        /// no whole response, as a request that leads does: it asks for the missing run only.
        ///
        /// The range request's fill can end after its client got the response, so a plain request
        /// right after one is such a follower; before the fix it fetched the whole response.
        @Test func aRequestThatWaitedForARangeFillCompletesThePartialContent() async throws {
            try await withProxy(Self.limit) { origin, proxy in
                let server = RangeServer(body: Self.body, etag: "\"v1\"")
                let held = Gate()
                // The `Range` of each request as it arrives at the origin (`origin.requests` lists
                // a request once it is answered).
                let arrived = Locked<[String]>([])
                origin.route("/w") { request, index in
                    let range = request.header("range") ?? "-"
                    arrived.withLock { $0.append(range) }
                    if range == "bytes=2048-3071" { await held.wait() }
                    return await server.route(request, index)
                }
                _ = try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=0-2047")])
                let before = arrived.withLock { $0.count }
                let leader = Task {
                    try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=2048-3071")])
                }
                #expect(await eventually { arrived.withLock { $0.last } == "bytes=2048-3071" })
                let follower = Task { try await RawHTTP.request(port: proxy.port, "/w") }
                // Time for the plain request to reach the fill's wait. Should it not get there in
                // time, it leads after the range fill and the assertions below hold as well: the
                // pause can let the test miss the bug, never fail it.
                try await Task.sleep(for: .milliseconds(300))
                #expect(arrived.withLock { $0.count } == before + 1)
                held.open()
                let range = try await leader.value
                #expect(range.status == 206)
                let whole = try await follower.value
                #expect(whole.status == 200)
                #expect(whole.body == Self.body)
                #expect(arrived.withLock { Array($0.dropFirst(before)) } == ["bytes=2048-3071", "bytes=3072-"])
                #expect(origin.requests("/w").last?.header("if-range") == "\"v1\"")
            }
        }

        /// RFC 9111 §4.4: an operator's `PURGE` of the URL and an unsafe method on it remove its
        /// partial content: the covered range goes to the origin again.
        @Test func purgeAndUnsafeMethodsRemovePartialContent() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-partial-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(["--dir", directory.path, "--metrics", "0"] + Self.limit) { origin, proxy in
                origin.route("/x", RangeServer(body: Self.body, etag: "\"v1\"").route)
                let admin = try #require(proxy.metricsPort)
                for remove in ["PURGE", "POST"] {
                    _ = try await RawHTTP.request(port: proxy.port, "/x", headers: [("Range", "bytes=0-99")])
                    let stored = origin.count("/x")
                    _ = try await RawHTTP.request(port: proxy.port, "/x", headers: [("Range", "bytes=10-19")])
                    #expect(origin.count("/x") == stored, "\(remove)")
                    if remove == "PURGE" {
                        let purged = try await RawHTTP.request(port: admin, method: "PURGE", "/x")
                        #expect(purged.status == 200)
                    } else {
                        let posted = try await RawHTTP.request(port: proxy.port, method: "POST", "/x")
                        #expect(posted.status == 200)
                    }
                    let before = origin.count("/x")
                    let again = try await RawHTTP.request(port: proxy.port, "/x", headers: [("Range", "bytes=10-19")])
                    #expect(again.body == Self.body[10...19])
                    #expect(origin.count("/x") > before, "\(remove)")
                }
            }
        }
    }

    /// Partial content on a PostgreSQL shared tier (run under `scripts/postgres run -- swift test …`).
    @Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["STASH_POSTGRES_URL"] != nil))
    struct ServePartialSharedTierTests {
        /// RFC 9111 §3.3, §3.4 with a shared tier: a piece one instance stored answers a covered range
        /// on another, a second piece stored there completes it, and the first instance then serves
        /// the whole response, all with no further origin request.
        @Test func piecesAreSharedBetweenInstances() async throws {
            try await ServeSharedTierTests.withTwoProxies(
                ServePartialTests.limit,
                prepare: { origin in
                    origin.route("/s", RangeServer(body: ServePartialTests.body, etag: "\"s1\"").route)
                }
            ) { origin, a, b in
                _ = try await RawHTTP.request(port: a.port, "/s", headers: [("Range", "bytes=0-2047")])
                let asked = origin.count("/s")
                let covered = try await RawHTTP.request(port: b.port, "/s", headers: [("Range", "bytes=100-199")])
                #expect(covered.status == 206)
                #expect(covered.body == ServePartialTests.body[100...199])
                #expect(origin.count("/s") == asked)
                let tail = try await RawHTTP.request(port: b.port, "/s", headers: [("Range", "bytes=2048-")])
                #expect(tail.body == ServePartialTests.body[2048...])
                let completed = origin.count("/s")
                #expect(completed == asked + 1)
                let whole = try await RawHTTP.request(port: a.port, "/s")
                #expect(whole.status == 200)
                #expect(whole.body == ServePartialTests.body)
                #expect(origin.count("/s") == completed)
            }
        }
    }

    /// An origin route that answers `Range` itself (RFC 9110 §14): one `bytes` range gets a `206`
    /// with its slice of `body`, anything else (or an `If-Range` that does not match) the whole `200`.
    final class RangeServer: Sendable {
        let body: Data
        let etag: Locked<String>

        init(body: Data, etag: String) {
            self.body = body
            self.etag = Locked(etag)
        }

        var route: Origin.Route {
            { [self] request, _ in answer(request) }
        }

        private func answer(_ request: Origin.Received) -> Origin.Reply {
            let etag = etag.withLock { $0 }
            let headers = [("Cache-Control", "max-age=600"), ("ETag", etag), ("X-Origin", "range-server")]
            guard let range = request.header("range"), let slice = Self.slice(range, count: body.count),
                request.header("if-range").map({ $0 == etag && !etag.hasPrefix("W/") }) ?? true
            else { return Origin.Reply(headers: headers, body: body) }
            return Origin.Reply(
                status: 206,
                headers: headers + [("Content-Range", "bytes \(slice.lowerBound)-\(slice.upperBound)/\(body.count)")],
                body: body.subdata(in: slice.lowerBound..<(slice.upperBound + 1)))
        }

        private static func slice(_ value: String, count: Int) -> ClosedRange<Int>? {
            guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
            let ends = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2 else { return nil }
            if ends[0].isEmpty {
                guard let suffix = Int(ends[1]), suffix > 0 else { return nil }
                return max(0, count - suffix)...(count - 1)
            }
            guard let first = Int(ends[0]), first < count else { return nil }
            let last = ends[1].isEmpty ? count - 1 : min(Int(ends[1]) ?? -1, count - 1)
            return first <= last ? first...last : nil
        }
    }
#endif
