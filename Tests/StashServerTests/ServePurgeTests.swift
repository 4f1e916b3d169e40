#if Serve
    import Foundation
    import Testing

    /// Purges by the operator and invalidation by unsafe methods (RFC 9111 §4.4).
    @Suite(.serialized)
    struct ServePurgeTests {
        static func send(_ method: String, _ target: String, port: Int) async throws -> RawHTTP.Response {
            try await RawHTTP.request(port: port, method: method, target)
        }

        /// `PURGE /path` on the admin listener removes the URL (all tiers); the next request goes to the
        /// origin; a second purge finds nothing (`404`).
        @Test func purgeOnTheAdminListenerRemovesOneURL() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-purge-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(["--dir", directory.path, "--metrics", "0"]) { origin, proxy in
                origin.set("/p", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("p".utf8)))
                origin.set("/q", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("q".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/p")
                _ = try await RawHTTP.request(port: proxy.port, "/q")
                _ = try await RawHTTP.request(port: proxy.port, "/p")
                #expect(origin.count("/p") == 1)
                let admin = try #require(proxy.metricsPort)
                let purged = try await Self.send("PURGE", "/p", port: admin)
                #expect(purged.status == 200)
                _ = try await RawHTTP.request(port: proxy.port, "/p")
                _ = try await RawHTTP.request(port: proxy.port, "/q")
                #expect(origin.count("/p") == 2)
                #expect(origin.count("/q") == 1)
                let none = try await Self.send("PURGE", "/nothing", port: admin)
                #expect(none.status == 404)
            }
        }

        /// `PURGE /prefix*` removes every URL under the prefix, variants included, and nothing else.
        @Test func purgeOfAPrefixRemovesEveryURLUnderIt() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-purge-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(["--dir", directory.path, "--metrics", "0"]) { origin, proxy in
                for path in ["/dir/a", "/dir/b", "/other"] {
                    origin.set(
                        path,
                        Origin.Reply(
                            headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept")], body: Data(path.utf8)))
                }
                for path in ["/dir/a", "/dir/b", "/other"] {
                    _ = try await RawHTTP.request(port: proxy.port, path, headers: [("Accept", "text/plain")])
                }
                let purged = try await Self.send("PURGE", "/dir/*", port: try #require(proxy.metricsPort))
                #expect(purged.status == 200)
                for path in ["/dir/a", "/dir/b", "/other"] {
                    _ = try await RawHTTP.request(port: proxy.port, path, headers: [("Accept", "text/plain")])
                }
                #expect(origin.count("/dir/a") == 2)
                #expect(origin.count("/dir/b") == 2)
                #expect(origin.count("/other") == 1)
            }
        }

        /// `PURGE` on the proxy's own address is refused (`403`, never forwarded) unless the peer is in
        /// `--purge-allow`.
        @Test func purgeOnTheProxyAddressNeedsTheAllowList() async throws {
            try await withProxy { origin, proxy in
                origin.set("/x", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("x".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/x")
                let refused = try await Self.send("PURGE", "/x", port: proxy.port)
                #expect(refused.status == 403)
                _ = try await RawHTTP.request(port: proxy.port, "/x")
                #expect(origin.count("/x") == 1)
            }
            try await withProxy(["--purge-allow", "127.0.0.1"]) { origin, proxy in
                origin.set("/x", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("x".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/x")
                let allowed = try await Self.send("PURGE", "/x", port: proxy.port)
                #expect(allowed.status == 200)
                _ = try await RawHTTP.request(port: proxy.port, "/x")
                #expect(origin.count("/x") == 2)
            }
        }

        /// RFC 9111 §4.4: a successful response to an unsafe method (here `PATCH`; an unknown one such
        /// as `M-SEARCH` is unsafe too, RFC 9110 §9.2.1, and the conformance suite's
        /// `invalidate-M-SEARCH` covers it) invalidates the target URI and the same-origin `Location`
        /// and `Content-Location`.
        @Test func unsafeMethodInvalidatesTargetLocationAndContentLocation() async throws {
            try await withProxy { origin, proxy in
                for path in ["/moved", "/content"] {
                    origin.set(path, Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data(path.utf8)))
                }
                origin.route("/target") { request, _ in
                    request.method == "GET"
                        ? Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("t".utf8))
                        : Origin.Reply(headers: [("Location", "/moved"), ("Content-Location", "/content")])
                }
                for path in ["/target", "/moved", "/content"] { _ = try await RawHTTP.request(port: proxy.port, path) }
                let patch = try await RawHTTP.request(
                    port: proxy.port, method: "PATCH", "/target", body: Data("x".utf8))
                #expect(patch.status == 200)
                for path in ["/target", "/moved", "/content"] { _ = try await RawHTTP.request(port: proxy.port, path) }
                #expect(origin.requests("/target").filter { $0.method == "GET" }.count == 2)
                #expect(origin.count("/moved") == 2)
                #expect(origin.count("/content") == 2)
            }
        }

        /// `stash purge URL --dir` removes a URL from a stopped proxy's disk tier.
        @Test func offlinePurgeRemovesTheURLFromTheDiskTier() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-purge-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let origin = try await Origin.start()
            defer { Task { await origin.stop() } }
            origin.set("/o", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("o".utf8)))
            origin.set("/k", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("k".utf8)))
            for round in 0..<2 {
                let proxy = try await ServeProcess.start(["--origin", origin.url, "--dir", directory.path])
                _ = try await RawHTTP.request(port: proxy.port, "/o")
                _ = try await RawHTTP.request(port: proxy.port, "/k")
                await proxy.stop()
                if round == 0 {
                    let purge = ChildProcess()
                    purge.executableURL = try ServeProcess.executable
                    purge.arguments = ["purge", origin.url + "/o", "--dir", directory.path]
                    purge.standardOutput = FileHandle.nullDevice
                    try purge.run()
                    purge.waitUntilExit()
                    #expect(purge.terminationStatus == 0)
                }
            }
            #expect(origin.count("/o") == 2)
            #expect(origin.count("/k") == 1)
        }
    }
#endif
