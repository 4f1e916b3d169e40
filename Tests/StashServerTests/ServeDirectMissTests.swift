#if Serve
    import Foundation
    import StashServer
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The plain miss that runs from callbacks, without a task (a `GET` that no tier has, whose fill
    /// the request leads), with a disk tier: concurrent misses of one URL still make one origin
    /// request, a body larger than the client takes at once is relayed whole under back-pressure and
    /// stored, a response the cache may not store is relayed and asked for again, and an origin that
    /// closes in the middle of a body closes the client's connection and stores nothing, and one
    /// that does not answer in time is a `504` that ends the fill.
    @Suite(.serialized)
    struct ServeDirectMissTests {
        /// Runs `body` with `stash serve` in front of `origin`, with a disk tier in a new directory.
        static func withDiskProxy<T>(origin: RawOrigin, _ body: (ServeProcess) async throws -> T) async throws -> T {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer {
                origin.stop()
                try? FileManager.default.removeItem(at: directory)
            }
            return try await ServeProcess.running(["--origin", origin.url, "--dir", directory.path], body)
        }

        /// Concurrent misses of one URL are coalesced (as nginx's `proxy_cache_lock`): the first
        /// fetches it, the others wait for it and answer from what it stored (RFC 9111 §4: a stored
        /// response that is fresh may be reused), so the origin is asked once.
        @Test func concurrentMissesOfOneURLMakeOneOriginRequest() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                usleep(300_000)  // the other requests arrive while the first one's fill is under way
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: 6\r\n\r\nshared")
            }
            try await Self.withDiskProxy(origin: origin) { proxy in
                let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await RawHTTP.request(port: proxy.port, "/one").text }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(bodies == Array(repeating: "shared", count: 6))
                #expect(origin.requests.count == 1)
            }
        }

        /// RFC 9110 §15.6.5: an origin that sends no response head within the origin timeout is a
        /// `504 (Gateway Timeout)`; the fill ends with it, so the next request for the URL goes to the
        /// origin again (and is answered) instead of waiting for the failed one.
        @Test func anOriginThatDoesNotAnswerInTimeIsAGatewayTimeoutAndEndsTheFill() async throws {
            let calls = Locked(0)
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                if call == 1 { usleep(1_500_000) }
                try connection.send("HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: 4\r\n\r\nlate")
            }
            defer { origin.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = ProxyServer.Configuration(origin: URL(string: origin.url)!)
            configuration.port = 0
            configuration.directory = directory
            configuration.originTimeout = .milliseconds(500)
            let server = try ProxyServer(configuration: configuration)
            try await server.start()
            let port = try #require(server.port)
            let first = try await RawHTTP.request(port: port, "/slow")
            #expect(first.status == 504)
            let second = try await RawHTTP.request(port: port, "/slow")
            #expect(second.status == 200)
            #expect(second.text == "late")
            #expect(origin.requests.count == 2)
            await server.shutdown()
        }

        /// RFC 9112 §6.2: a 16 MiB body sent to a client that does not read for a while (the
        /// proxy's writes to it stop being taken, and the origin is no longer read meanwhile)
        /// reaches it byte for byte, and is stored whole: the next request is a hit.
        @Test func aLargeBodyToAClientThatReadsLateIsRelayedWholeAndStored() async throws {
            var generator = SystemRandomNumberGenerator()
            // A random block of a prime length, repeated: every offset of a piece differs.
            let block = Data((0..<65_521).map { _ in UInt8.random(in: 0...255, using: &generator) })
            var built = Data(capacity: 16 << 20)
            while built.count < 16 << 20 { built.append(block.prefix((16 << 20) - built.count)) }
            let body = built
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: \(body.count)\r\n\r\n")
                try connection.send(body)
            }
            try await Self.withDiskProxy(origin: origin) { proxy in
                let port = proxy.port
                let raw = try await RawHTTP.onThread {
                    let socket = try RawHTTP.connect(port: port, timeout: 30)
                    defer { close(socket) }
                    try RawHTTP.write(socket, Data("GET /large HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
                    usleep(1_000_000)
                    return RawHTTP.readToEnd(socket)
                }
                let response = try #require(RawHTTP.parse(raw).first)
                #expect(response.status == 200)
                #expect(response.body == body)
                let hit = try await RawHTTP.request(port: port, "/large")
                #expect(hit.status == 200)
                #expect(hit.body == body)
                #expect(origin.requests.count == 1)
            }
        }

        /// RFC 9111 §5.2.2.5: a `no-store` response is relayed, in all its pieces, and not stored:
        /// the next request for it goes to the origin again.
        @Test func aResponseThatMayNotBeStoredIsRelayedAndAskedForAgain() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                try connection.send("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: 9\r\n\r\nnot")
                usleep(20_000)
                try connection.send("-st")
                usleep(20_000)
                try connection.send("ore")
            }
            try await Self.withDiskProxy(origin: origin) { proxy in
                for attempt in 1...2 {
                    let response = try await RawHTTP.request(port: proxy.port, "/private")
                    #expect(response.status == 200, "\(attempt)")
                    #expect(response.text == "not-store", "\(attempt)")
                    #expect(response.header("cache-control") == "no-store", "\(attempt)")
                }
                #expect(origin.requests.count == 2)
            }
        }

        /// RFC 9112 §6.3: an origin that closes after part of the body it announced leaves the
        /// client with a body shorter than its `Content-Length` and a closed connection (a
        /// truncated body must not look complete); nothing is stored, and the next request goes to
        /// the origin and gets the whole body.
        @Test func anOriginThatClosesMidBodyClosesTheClientConnectionAndStoresNothing() async throws {
            let whole = Data(repeating: 0x61, count: 100_000)
            let calls = Locked(0)
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: \(whole.count)\r\n\r\n")
                if call == 1 {
                    try connection.send(whole.prefix(40_000))
                    usleep(50_000)
                    throw RawHTTP.Failure(description: "closing in the middle of the body")
                }
                try connection.send(whole)
            }
            try await Self.withDiskProxy(origin: origin) { proxy in
                let raw = try await ServeOriginConnectionTests.get("/cut", port: proxy.port)
                let text = String(decoding: raw.prefix(64), as: UTF8.self)
                #expect(text.hasPrefix("HTTP/1.1 200"))
                let headEnd = try #require(raw.range(of: Data("\r\n\r\n".utf8)))
                #expect(raw.count - headEnd.upperBound < whole.count)
                let again = try await RawHTTP.request(port: proxy.port, "/cut")
                #expect(again.status == 200)
                #expect(again.body == whole)
                #expect(origin.requests.count == 2)
            }
        }

        /// A miss's store, staged in memory for the disk tier's writer (a body below the inline
        /// threshold) or written to a value file (above it), while the staging area has room or
        /// after waiting for the writer when it is full, is on disk for the next process: a new
        /// server on the directory answers every URL without asking the origin (RFC 9111 §3: the
        /// responses were stored; §4.2: still fresh).
        @Test func everyMissIsOnDiskForTheNextServerWhetherStagedOrWrittenToAFile() async throws {
            // 24 small bodies (4 KiB) and two above the inline threshold (32 KiB); with a 1 MiB
            // size limit the staging area holds 52 KiB, so some of the small ones find it full.
            @Sendable func body(_ path: String) -> Data {
                let index = Int(path.split(separator: "/").last.flatMap { Int($0) } ?? 0)
                let length = index >= 24 ? 40_000 + index : 4096 + index
                return Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) })
            }
            let origin = try RawOrigin.start(keepAlive: true) { request, connection in
                let path = String(request.split(separator: " ")[1])
                let bytes = body(path)
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: \(bytes.count)\r\n\r\n")
                try connection.send(bytes)
            }
            defer { origin.stop() }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            var configuration = ProxyServer.Configuration(origin: URL(string: origin.url)!)
            configuration.port = 0
            configuration.directory = directory
            configuration.sizeLimit = .mebibytes(1)
            let paths = (0..<26).map { "/o/\($0)" }
            // The first server asks the origin for each; the second, on the same directory, for none.
            for _ in 0..<2 {
                let server = try ProxyServer(configuration: configuration)
                try await server.start()
                let port = try #require(server.port)
                for path in paths {
                    let response = try await RawHTTP.request(port: port, path)
                    #expect(response.status == 200)
                    #expect(response.body == body(path), "\(path)")
                }
                await server.shutdown()
                #expect(origin.requests.count == paths.count)
            }
        }
    }
#endif
