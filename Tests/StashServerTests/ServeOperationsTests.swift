#if Serve
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `stash serve` under load and as an operated server (issue 32): coalescing, limits, metrics,
    /// access log, graceful shutdown.
    @Suite(.serialized)
    struct ServeOperationsTests {
        /// 100 concurrent requests for one uncached URL make exactly one origin request.
        @Test func coalescesConcurrentMisses() async throws {
            try await withProxy { origin, proxy in
                let gate = Gate()
                origin.route("/hot") { _, _ in
                    await gate.wait()
                    return Origin.Reply(
                        headers: [("Cache-Control", "max-age=600")], body: Data(repeating: 1, count: 10_000))
                }
                let sent = Locked(0)
                let port = proxy.port
                try await withThrowingTaskGroup(of: Data.self) { group in
                    for _ in 0..<100 {
                        group.addTask {
                            try await RawHTTP.onThread {
                                let socket = try RawHTTP.connect(port: port, timeout: 30)
                                defer { close(socket) }
                                try RawHTTP.write(
                                    socket, Data("GET /hot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                                sent.withLock { $0 += 1 }
                                return RawHTTP.readToEnd(socket)
                            }
                        }
                    }
                    #expect(await eventually { sent.withLock { $0 } == 100 && origin.count("/hot") >= 1 })
                    gate.open()
                    var bodies = 0
                    for try await raw in group {
                        let response = try #require(RawHTTP.parse(raw).first)
                        #expect(response.status == 200)
                        if response.body.count == 10_000 { bodies += 1 }
                    }
                    #expect(bodies == 100)
                }
                #expect(origin.count("/hot") == 1)
            }
        }

        /// A request head over the size limit gets 431 and the connection is closed (RFC 6585 §5).
        @Test func oversizedHeadIsRefusedWith431() async throws {
            try await withProxy(["--max-header-size", "4096"]) { origin, proxy in
                origin.set("/", Origin.Reply(body: Data("x".utf8)))
                let big = String(repeating: "a", count: 8_000)
                let raw = try await RawHTTP.exchange(
                    port: proxy.port, send: Data("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\n\r\n".utf8))
                let responses = RawHTTP.parse(raw)
                #expect(responses.count == 1)
                #expect(responses.first?.status == 431)
                #expect(origin.count("/") == 0)
            }
        }

        /// A head that arrives too slowly gets 408 and the connection is closed (slowloris); an idle
        /// connection is closed.
        @Test func slowHeadGets408AndIdleConnectionCloses() async throws {
            try await withProxy(["--header-timeout", "0.5", "--idle-timeout", "0.5"]) { origin, proxy in
                origin.set("/", Origin.Reply(body: Data("x".utf8)))
                let started = ContinuousClock.now
                let raw = try await RawHTTP.exchange(port: proxy.port, send: Data("GET / HTTP/1.1\r\nHost: x\r\n".utf8))
                #expect(RawHTTP.parse(raw).first?.status == 408)
                #expect(ContinuousClock.now - started < .seconds(5))
                let idle = try await RawHTTP.exchange(port: proxy.port, send: Data())
                #expect(idle.isEmpty)
                #expect(origin.count("/") == 0)
            }
        }

        /// The metrics endpoint reports hits per tier, misses and bytes per tier.
        @Test func metricsReportHitsMissesAndBytesPerTier() async throws {
            try await withProxy(["--metrics", "0"]) { origin, proxy in
                origin.set(
                    "/m",
                    Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data(repeating: 2, count: 1000)))
                _ = try await RawHTTP.request(port: proxy.port, "/m")
                _ = try await RawHTTP.request(port: proxy.port, "/m")
                _ = try await RawHTTP.request(port: proxy.port, "/m")
                let metricsPort = try #require(proxy.metricsPort)
                let metrics = try await RawHTTP.request(port: metricsPort, "/metrics")
                #expect(metrics.status == 200)
                let lines = Set(metrics.text.split(separator: "\n").map(String.init))
                #expect(lines.contains(#"stash_serve_hits_total{tier="memory"} 2"#))
                #expect(lines.contains("stash_serve_misses_total 1"))
                #expect(lines.contains(#"stash_serve_bytes_total{tier="memory"} 2000"#))
                #expect(lines.contains(#"stash_serve_bytes_total{tier="origin"} 1000"#))
                #expect(lines.contains(#"stash_serve_requests_total{cache="MISS"} 1"#))
            }
        }

        /// The access log has one common-format line per request, with the cache status.
        @Test func accessLogRecordsCacheStatus() async throws {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-log-\(UUID())")
            defer { try? FileManager.default.removeItem(at: log) }
            try await withProxy(["--access-log", log.path]) { origin, proxy in
                origin.set("/l", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("12345".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/l")
                _ = try await RawHTTP.request(port: proxy.port, "/l")
            }
            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.first?.hasPrefix("127.0.0.1 - - [") == true)
            #expect(lines.first?.hasSuffix("\"GET /l HTTP/1.1\" 200 5 MISS") == true)
            #expect(lines.last?.hasSuffix("\"GET /l HTTP/1.1\" 200 5 HIT") == true)
        }

        /// SIGTERM lets the request in flight finish, refuses new connections, then exits 0.
        @Test func gracefulShutdownFinishesRequestsInFlight() async throws {
            let origin = try await Origin.start()
            defer { Task { await origin.stop() } }
            let gate = Gate()
            origin.route("/slow") { _, _ in
                await gate.wait()
                return Origin.Reply(body: Data(repeating: 3, count: 50_000))
            }
            let proxy = try await ServeProcess.start(["--origin", origin.url])
            let port = proxy.port
            let inFlight = Task { try await RawHTTP.request(port: port, "/slow") }
            #expect(await eventually { origin.count("/slow") == 1 })
            proxy.signal(SIGTERM)
            #expect(await eventually { (try? RawHTTP.connect(port: port, timeout: 1)).map { close($0) } == nil })
            gate.open()
            let response = try await inFlight.value
            #expect(response.status == 200)
            #expect(response.body.count == 50_000)
            let status = await proxy.waitForExit()
            #expect(status == 0, "stash serve exited with \(status): \(proxy.standardError)")
        }
    }
#endif
