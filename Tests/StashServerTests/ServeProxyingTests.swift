#if Serve
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `stash serve` forwards as a proxy must (RFC 9110 §7.6) and fails clearly at start-up.
    @Suite(.serialized)
    struct ServeProxyingTests {
        /// RFC 9110 §7.6.1 and §7.6.3: hop-by-hop fields (and those `Connection` names) are dropped in
        /// both directions; `Via` is added in both; end-to-end fields pass.
        @Test func dropsHopByHopFieldsAndAddsVia() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/h",
                    Origin.Reply(
                        headers: [
                            ("Connection", "X-Origin-Hop"), ("X-Origin-Hop", "1"), ("Keep-Alive", "timeout=5"),
                            ("X-End", "kept"), ("Cache-Control", "no-store"),
                        ], body: Data("ok".utf8)))
                let response = try await RawHTTP.request(
                    port: proxy.port, "/h",
                    headers: [
                        ("Connection", "X-Client-Hop"), ("X-Client-Hop", "1"), ("Keep-Alive", "timeout=5"),
                        ("TE", "trailers"), ("Upgrade", "websocket"), ("Proxy-Authorization", "Basic x"),
                        ("X-Client-End", "kept"),
                    ])
                let received = try #require(origin.requests("/h").first)
                for name in ["x-client-hop", "keep-alive", "te", "upgrade", "proxy-authorization"] {
                    #expect(received.header(name) == nil, "\(name) reached the origin")
                }
                #expect(received.header("x-client-end") == "kept")
                #expect(received.header("via") == "1.1 stash")
                #expect(response.header("x-origin-hop") == nil)
                #expect(response.header("keep-alive") == nil)
                #expect(response.header("x-end") == "kept")
                #expect(response.header("via") == "1.1 stash")
            }
        }

        /// Every method is forwarded with its body.
        @Test func forwardsMethodsAndRequestBodies() async throws {
            try await withProxy { origin, proxy in
                origin.route("/echo") { request, _ in
                    Origin.Reply(headers: [("X-Method", request.method)], body: request.body)
                }
                let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
                for method in ["POST", "PUT", "PATCH", "DELETE"] {
                    let response = try await RawHTTP.request(port: proxy.port, method: method, "/echo", body: payload)
                    #expect(response.status == 200)
                    #expect(response.header("x-method") == method)
                    #expect(response.body == payload)
                }
                #expect(origin.count("/echo") == 4)
            }
        }

        /// Pipelined requests on one connection are answered in order (RFC 9112 §9.3.2).
        @Test func answersPipelinedRequestsInOrder() async throws {
            try await withProxy { origin, proxy in
                for name in ["one", "two", "three"] {
                    origin.set(
                        "/\(name)",
                        Origin.Reply(headers: [("Cache-Control", "max-age=60")], body: Data(name.utf8)))
                }
                _ = try await RawHTTP.request(port: proxy.port, "/two")  // one hit among misses
                var raw = ""
                for name in ["one", "two", "three"] {
                    raw += "GET /\(name) HTTP/1.1\r\nHost: x\r\n\r\n"
                }
                raw += "GET /one HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                let responses = RawHTTP.parse(try await RawHTTP.exchange(port: proxy.port, send: Data(raw.utf8)))
                #expect(responses.map(\.text) == ["one", "two", "three", "one"])
            }
        }

        /// Pipelined memory hits, a `HEAD` miss and a `POST` with a body are answered in order on one
        /// connection (RFC 9112 §9.3.2); the `HEAD` response has no body (RFC 9110 §9.3.2); nothing
        /// after a request with `Connection: close` is answered (RFC 9112 §9.6).
        @Test func answersMixedPipelinedRequestsInOrderAndStopsAfterClose() async throws {
            try await withProxy { origin, proxy in
                origin.set("/hit", Origin.Reply(headers: [("Cache-Control", "max-age=60")], body: Data("hit".utf8)))
                // FlyingFox would send a HEAD response's body: the origin sends it none.
                origin.route("/head") { request, _ in
                    Origin.Reply(
                        headers: [("Cache-Control", "no-store")],
                        body: request.method == "HEAD" ? Data() : Data("head".utf8))
                }
                origin.route("/post") { request, _ in Origin.Reply(body: Data("posted ".utf8) + request.body) }
                _ = try await RawHTTP.request(port: proxy.port, "/hit")
                let raw =
                    "GET /hit HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /hit HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"
                    + "GET /hit HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    + "GET /post HTTP/1.1\r\nHost: x\r\n\r\n"
                let data = try await RawHTTP.exchange(port: proxy.port, send: Data(raw.utf8))
                var responses: [RawHTTP.Response] = []
                var rest = data
                // HEAD's response has a Content-Length but no body: parse it on its own.
                for isHead in [false, true, false, false, false] {
                    guard let response = RawHTTP.parse(rest, isHead: isHead).first else { break }
                    responses.append(response)
                    let headLength = rest.range(of: Data("\r\n\r\n".utf8))!.upperBound - rest.startIndex
                    rest = rest.dropFirst(headLength + (isHead ? 0 : response.body.count))
                }
                #expect(responses.map(\.status) == [200, 200, 200, 200, 200])
                #expect(responses.map(\.text) == ["hit", "", "hit", "posted abc", "hit"])
                #expect(responses[0].header("age") != nil)
                #expect(rest.isEmpty)
                #expect(origin.count("/hit") == 1)
                #expect(origin.count("/head") == 1)
                #expect(origin.count("/post") == 1)
            }
        }

        /// RFC 9112 §6.3 and §7.1: a body of unknown length reaches a keep-alive client in chunks; once
        /// stored, it is served with its `Content-Length`, and the connection carries the next request.
        @Test func bodyOfUnknownLengthIsChunkedThenServedWithItsLength() async throws {
            try await withProxy { origin, proxy in
                let size = 200_000
                origin.set(
                    "/stream",
                    Origin.Reply(headers: [("Cache-Control", "max-age=60")], streamedSize: size, isChunked: true))
                let expected = Data((0..<size).map { Generated.block[$0 % Generated.block.count] })
                let raw =
                    "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                let responses = RawHTTP.parse(try await RawHTTP.exchange(port: proxy.port, send: Data(raw.utf8)))
                try #require(responses.count == 2)
                #expect(responses[0].header("transfer-encoding") == "chunked")
                #expect(responses[0].header("content-length") == nil)
                #expect(responses[0].body == expected)
                #expect(responses[1].header("content-length") == String(size))
                #expect(responses[1].header("age") != nil)
                #expect(responses[1].body == expected)
                #expect(origin.count("/stream") == 1)
            }
        }

        /// A bad origin URL is a usage error that names it.
        @Test func badOriginURLIsAUsageError() async throws {
            let proxy = try? await ServeProcess.start(["--origin", "not a url"])
            #expect(proxy == nil)
            let (status, message) = try Self.runToExit([
                "serve", "--origin", "ftp://example/x", "--listen", "127.0.0.1:0",
            ])
            #expect(status == 64)
            #expect(message.contains("ftp://example/x"))
        }

        /// `--exit-with-parent`: a proxy whose parent process was killed shuts down by itself; without
        /// the flag it keeps running, an orphan (which the test then stops).
        @Test(arguments: [true, false])
        func aProxyStartedWithExitWithParentDoesNotOutliveItsParent(exitsWithParent: Bool) async throws {
            let origin = try await Origin.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-parent-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("serve.out").path
            var serve = ["serve", "--origin", origin.url, "--listen", "127.0.0.1:0"]
            if exitsWithParent { serve.append("--exit-with-parent") }
            // A shell starts the proxy in the background, prints its process id and waits: the
            // shell is the proxy's parent, and the test kills it.
            let shell = ChildProcess()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments =
                ["-c", "\"$0\" \"$@\" > '\(output)' 2>&1 & echo $!; exec sleep 120", try ServeProcess.executable.path]
                + serve
            let pipe = Pipe()
            shell.standardOutput = pipe
            try shell.run()
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let data = pipe.fileHandleForReading.availableData
                if data.isEmpty { break }
                line.append(data)
            }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let pid = try #require(pid_t(text))
            let listening = await eventually {
                (try? String(contentsOfFile: output, encoding: .utf8))?.contains("listening on") == true
            }
            #expect(listening)
            kill(shell.processIdentifier, SIGKILL)
            shell.waitUntilExit()
            if exitsWithParent {
                #expect(await eventually { !Self.isRunning(pid) }, "the proxy outlived its parent")
            } else {
                #expect(await !eventually(within: 2) { !Self.isRunning(pid) })
                kill(pid, SIGTERM)
                #expect(await eventually { !Self.isRunning(pid) })
            }
            await origin.stop()
        }

        /// Whether process `pid` runs: it exists and, on Linux, is not a zombie (an orphan that
        /// exited and that its new parent has not reaped yet).
        static func isRunning(_ pid: pid_t) -> Bool {
            guard kill(pid, 0) == 0 else { return false }
            #if os(Linux)
                if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let end = stat.lastIndex(of: ")")
                {
                    return !stat[stat.index(after: end)...].hasPrefix(" Z")
                }
            #endif
            return true
        }

        /// Runs `stash` with `arguments` to its exit: its status and standard error.
        static func runToExit(_ arguments: [String]) throws -> (status: Int32, errors: String) {
            let process = ChildProcess()
            process.executableURL = try ServeProcess.executable
            process.arguments = arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = Pipe()
            try process.run()
            process.waitUntilExit()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, message)
        }

        /// A size that `stash serve` checks when it runs is a usage error too (status 64), with the
        /// option's name and what it accepts.
        @Test(arguments: ["--memory-limit", "--size-limit", "--range-fetch-limit"])
        func zeroSizeIsAUsageError(option: String) async throws {
            let (status, message) = try Self.runToExit([
                "serve", "--origin", "http://127.0.0.1:1", "--listen", "127.0.0.1:0", option, "0B",
            ])
            #expect(status == 64)
            #expect(
                message
                    == "stash: Invalid size '0B' for \(option): it must be more than 0 bytes, such as 10MB. Run 'stash serve --help' for usage.\n"
            )
        }

        /// A port already in use, and an origin that cannot be reached, fail at start-up with a message
        /// that says so.
        @Test func portInUseAndUnreachableOriginFailAtStartUp() async throws {
            try await withProxy { origin, proxy in
                let second = ChildProcess()
                second.executableURL = try ServeProcess.executable
                second.arguments = ["serve", "--origin", origin.url, "--listen", "127.0.0.1:\(proxy.port)"]
                let errors = Pipe()
                second.standardError = errors
                second.standardOutput = Pipe()
                try second.run()
                second.waitUntilExit()
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(second.terminationStatus != 0)
                #expect(message.contains("already in use"))
            }
            let closedPort = try await freePort()
            do {
                _ = try await ServeProcess.start(["--origin", "http://127.0.0.1:\(closedPort)"])
                Issue.record("started with an unreachable origin")
            } catch {
                #expect("\(error)".contains("Cannot reach the origin"))
            }
        }

        private func freePort() async throws -> Int {
            let origin = try await Origin.start()
            let port = Int(origin.port)
            await origin.stop()
            return port
        }
    }
#endif
