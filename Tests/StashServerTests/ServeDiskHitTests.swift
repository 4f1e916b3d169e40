#if Serve
    import Foundation
    import StashServer
    import Testing

    /// The direct disk-hit path of `stash serve`: a fresh disk-tier hit read on a disk thread and
    /// written on the event loop, without an exchange task.
    @Suite(.serialized)
    struct ServeDiskHitTests {
        static func makeServer(
            origin: Origin, directory: URL, memoryLimit: Int = 64 << 10, hold: (@Sendable (String) -> Void)? = nil
        ) throws -> ProxyServer {
            var configuration = ProxyServer.Configuration(origin: URL(string: origin.url)!)
            configuration.port = 0
            configuration.metricsPort = 0
            configuration.workers = 1  // one event loop: the metrics are counted before the next request
            configuration.directory = directory
            // 64 KiB: bodies above 8 KiB never enter the memory tier, so each of their hits is a disk hit.
            configuration.memoryLimit = .bytes(memoryLimit)
            configuration.beforeDiskRead = hold
            return try ProxyServer(configuration: configuration)
        }

        static func diskHits(_ server: ProxyServer) async throws -> Int {
            let metrics = try await RawHTTP.request(port: try #require(server.metricsPort), "/metrics")
            let prefix = #"stash_serve_hits_total{tier="disk"} "#
            let line = metrics.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
            return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
        }

        static func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
        }

        /// A fresh disk-tier hit answers with the stored head and the exact stored bytes.
        ///
        /// A body in a value file (above the inline threshold) and one inline in the index both
        /// come with the stored header fields and one `Age`
        /// of at least the origin's (RFC 9111 §4.2.3: the corrected initial age includes the
        /// `Age` the origin sent); `HEAD` gets the same head without the body (RFC 9110 §9.3.2) and
        /// a matching `If-None-Match` a `304` (RFC 9111 §4.3.2). No request reaches the origin.
        @Test func diskHitAnswersWithTheStoredHeadAndBytes() async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let fields: [(String, String)] = [
                ("Cache-Control", "max-age=3600"), ("ETag", "\"v1\""), ("X-Note", "kept as sent"),
                ("Content-Type", "application/octet-stream"),
            ]
            let big = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let small = Data((0..<12_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
            origin.set("/big", Origin.Reply(headers: fields + [("Age", "100")], body: big))
            origin.set("/small", Origin.Reply(headers: fields + [("Age", "100")], body: small))
            let first = try Self.makeServer(origin: origin, directory: directory)
            try await first.start()
            #expect(try await RawHTTP.request(port: first.port!, "/big").body == big)
            #expect(try await RawHTTP.request(port: first.port!, "/small").body == small)
            await first.shutdown()

            let second = try Self.makeServer(origin: origin, directory: directory)
            try await second.start()
            let port = second.port!
            for (path, body) in [("/big", big), ("/small", small), ("/big", big)] {
                let hit = try await RawHTTP.request(port: port, path)
                #expect(hit.status == 200)
                #expect(hit.body == body, "\(path)")
                #expect(hit.values("Content-Length") == [String(body.count)])
                for (name, value) in fields { #expect(hit.values(name) == [value], "\(path) \(name)") }
                let ages = hit.values("Age")
                #expect(ages.count == 1)
                #expect((ages.first.flatMap { Int($0) } ?? 0) >= 100)
            }
            let head = try await RawHTTP.request(port: port, method: "HEAD", "/big")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.values("Content-Length") == [String(big.count)])
            #expect(head.values("ETag") == ["\"v1\""])
            let notModified = try await RawHTTP.request(port: port, "/big", headers: [("If-None-Match", "\"v1\"")])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            #expect(notModified.values("ETag") == ["\"v1\""])
            #expect(notModified.values("Age").count == 1)
            #expect(origin.count("/big") == 1 && origin.count("/small") == 1)
            // /big is above the memory tier's item limit: each of its five answers was a disk hit.
            #expect(try await Self.diskHits(second) >= 5)
            await second.shutdown()
            await origin.stop()
        }

        /// While one URL's stored response is replaced over and over (a `POST` invalidates it,
        /// RFC 9111 §4.4, and the next `GET` stores the origin's new version), disk hits on other
        /// connections never answer with one version's head and another's body: each value file is
        /// sent from the entry read with its head.
        @Test func replacedValueFileNeverMixesHeadAndBody() async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let version = Locked(1)
            @Sendable func body(_ v: Int) -> Data { Data(repeating: UInt8(v & 0xFF), count: 40_000 + 1_000 * v) }
            origin.route("/r") { request, _ in
                let v = version.withLock { $0 }
                if request.method == "POST" { return Origin.Reply(body: Data()) }
                return Origin.Reply(
                    headers: [("Cache-Control", "max-age=3600"), ("X-Version", String(v))], body: body(v))
            }
            let server = try Self.makeServer(origin: origin, directory: directory)
            try await server.start()
            let port = server.port!
            #expect(try await RawHTTP.request(port: port, "/r").status == 200)
            let done = Locked(false)
            let checked = Locked(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        while !done.withLock({ $0 }) {
                            let answer = try await RawHTTP.request(port: port, "/r")
                            #expect(answer.status == 200)
                            let v = try #require(answer.header("X-Version").flatMap { Int($0) })
                            #expect(answer.body == body(v), "version \(v): \(answer.body.count) bytes")
                            #expect(answer.header("Content-Length") == String(body(v).count))
                            checked.withLock { $0 += 1 }
                        }
                    }
                }
                group.addTask {
                    defer { done.withLock { $0 = true } }
                    for v in 2...40 {
                        version.withLock { $0 = v }
                        #expect(try await RawHTTP.request(port: port, method: "POST", "/r").status == 200)
                        let stored = try await RawHTTP.request(port: port, "/r")
                        let seen = [
                            "X-Version \(stored.header("X-Version") ?? "-")", "\(stored.body.count) bytes",
                            "Age \(stored.header("Age") ?? "-")", "Via \(stored.header("Via") ?? "-")",
                        ]
                        #expect(
                            stored.status == 200 && stored.body == body(v),
                            "version \(v): \(seen.joined(separator: ", "))")
                    }
                }
                try await group.waitForAll()
            }
            #expect(checked.withLock { $0 } > 0)
            #expect(try await Self.diskHits(server) > 0)
            await server.shutdown()
            await origin.stop()
        }

        /// A disk hit reuses a head decoded before only while its entry keeps the stored text.
        ///
        /// After the URL's response is replaced by one with other fields and a body of the same
        /// length, the next disk hits answer with the new fields and the new bytes, never the old
        /// head with the new body (RFC 9111 §3: the stored header section is what a hit answers
        /// with). A body in a value file with a memory limit of 1 MiB (its heads are kept; the
        /// body, above 128 KiB, stays on disk), and one inline in the index with 64 KiB.
        @Test(arguments: [(1 << 20, "/file", 200_000), (64 << 10, "/inline", 12_000)])
        func aReplacedEntryNeverGetsTheHeadOfTheOldOne(memoryLimit: Int, path: String, size: Int) async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let version = Locked(1)
            @Sendable func body(_ v: Int) -> Data { Data(repeating: UInt8(v), count: size) }
            @Sendable func type(_ v: Int) -> String { v == 1 ? "text/plain" : "application/octet-stream" }
            origin.route(path) { request, _ in
                let v = version.withLock { $0 }
                if request.method == "POST" { return Origin.Reply(body: Data()) }
                return Origin.Reply(
                    headers: [
                        ("Cache-Control", "max-age=3600"), ("X-Version", String(v)), ("ETag", "\"v\(v)\""),
                        ("Content-Type", type(v)),
                    ], body: body(v))
            }
            let server = try Self.makeServer(origin: origin, directory: directory, memoryLimit: memoryLimit)
            try await server.start()
            let port = server.port!
            var hits = 0
            for v in 1...3 {
                version.withLock { $0 = v }
                if v > 1 {
                    // RFC 9111 §4.4: the POST invalidates the stored response; the GET stores v.
                    #expect(try await RawHTTP.request(port: port, method: "POST", path).status == 200)
                }
                #expect(try await RawHTTP.request(port: port, path).body == body(v))
                // Hits for longer than the disk tier's write delay (25 ms): the first ones may find
                // the new entry staged, the later ones find it committed, with its stored text.
                let until = ContinuousClock.now + .milliseconds(300)
                repeat {
                    let hit = try await RawHTTP.request(port: port, path)
                    #expect(hit.status == 200)
                    #expect(hit.header("X-Version") == String(v), "\(path) version \(v)")
                    #expect(hit.values("ETag") == ["\"v\(v)\""])
                    #expect(hit.header("Content-Type") == type(v))
                    #expect(hit.body == body(v), "\(path) version \(v)")
                    hits += 1
                } while ContinuousClock.now < until
            }
            #expect(origin.count(path) == 3 + 2)
            // Every hit above came from the disk tier (the body never enters the memory tier).
            #expect(try await Self.diskHits(server) == hits)
            await server.shutdown()
            await origin.stop()
        }

        /// Requests pipelined behind a disk read that is held up wait for it and are answered in
        /// order (RFC 9112 §9.3.2), while a memory-tier hit on another connection of the same event
        /// loop answers at once.
        @Test func pipelinedRequestsWaitForAHeldDiskReadInOrder() async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let slow = Data(repeating: 5, count: 50_000)
            origin.set("/slow", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: slow))
            origin.set("/hot", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: Data("hot".utf8)))
            let first = try Self.makeServer(origin: origin, directory: directory)
            try await first.start()
            #expect(try await RawHTTP.request(port: first.port!, "/slow").status == 200)
            await first.shutdown()

            let held = HeldDiskRead(suffix: "/slow")
            let second = try Self.makeServer(origin: origin, directory: directory, hold: held.hook)
            try await second.start()
            let port = second.port!
            #expect(try await RawHTTP.request(port: port, "/hot").text == "hot")  // into memory
            let raw =
                "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /hot HTTP/1.1\r\nHost: x\r\n\r\n"
                + "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let pipelined = Task { RawHTTP.parse(try await RawHTTP.exchange(port: port, send: Data(raw.utf8))) }
            #expect(await eventually { held.isHolding })
            let hot = try await RawHTTP.request(port: port, "/hot")
            #expect(hot.status == 200 && hot.text == "hot")
            held.release()
            let responses = try await pipelined.value
            #expect(responses.map(\.status) == [200, 200, 200])
            #expect(responses.map(\.body) == [slow, Data("hot".utf8), slow])
            #expect(origin.count("/slow") == 1)
            await second.shutdown()
            await origin.stop()
        }
    }
#endif
