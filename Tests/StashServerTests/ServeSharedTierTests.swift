#if Serve
    import Foundation
    import Testing

    /// Two `stash serve` instances on one real PostgreSQL shared tier (run under
    /// `scripts/postgres run -- swift test …`, which sets `STASH_POSTGRES_URL`).
    @Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["STASH_POSTGRES_URL"] != nil))
    struct ServeSharedTierTests {
        static var databaseURL: String { ProcessInfo.processInfo.environment["STASH_POSTGRES_URL"] ?? "" }

        /// Runs `body` with one origin and two proxies that share the database but no local tier.
        func withTwoProxies(_ body: (Origin, ServeProcess, ServeProcess) async throws -> Void) async throws {
            try await Self.withTwoProxies(prepare: { _ in }, body)
        }

        /// Runs `body` with an origin (routed by `prepare`) and two `stash serve` instances in front of
        /// it on the same shared tier, each with `arguments` added, and stops them whatever happens.
        static func withTwoProxies(
            _ arguments: [String] = [], prepare: (Origin) -> Void,
            _ body: (Origin, ServeProcess, ServeProcess) async throws -> Void
        ) async throws {
            let origin = try await Origin.start()
            prepare(origin)
            var started: [ServeProcess] = []
            do {
                for _ in 0..<2 {
                    // No test here is about the tier's timeouts: 30 seconds, not 2, so that a loaded
                    // machine (every test at once on two cores) does not send a lookup to the origin.
                    started.append(
                        try await ServeProcess.start(
                            ["--origin", origin.url, "--shared", databaseURL, "--shared-timeout", "30"] + arguments))
                }
                try await body(origin, started[0], started[1])
            } catch {
                for proxy in started { await proxy.stop() }
                await origin.stop()
                throw error
            }
            for proxy in started { await proxy.stop() }
            await origin.stop()
        }

        /// RFC 9111 §3.5 and §5.2.2.7: user A's `private` response is never served to user B through
        /// the shared tier.
        @Test func privateResponseOfOneInstanceIsNotServedByTheOther() async throws {
            try await withTwoProxies { origin, a, b in
                origin.route("/me") { request, _ in
                    Origin.Reply(
                        headers: [("Cache-Control", "private, max-age=600")],
                        body: Data((request.header("x-user") ?? "?").utf8))
                }
                let alice = try await RawHTTP.request(port: a.port, "/me", headers: [("X-User", "alice")])
                let bob = try await RawHTTP.request(port: b.port, "/me", headers: [("X-User", "bob")])
                #expect(alice.text == "alice")
                #expect(bob.text == "bob")
                #expect(origin.count("/me") == 2)
            }
        }

        /// RFC 9111 §3.5: a response to A's `Authorization` request is never served to B.
        @Test func authorizedResponseOfOneInstanceIsNotServedByTheOther() async throws {
            try await withTwoProxies { origin, a, b in
                origin.route("/account") { request, _ in
                    Origin.Reply(
                        headers: [("Cache-Control", "max-age=600")],
                        body: Data((request.header("authorization") ?? "none").utf8))
                }
                let alice = try await RawHTTP.request(
                    port: a.port, "/account", headers: [("Authorization", "Bearer a")])
                let bob = try await RawHTTP.request(port: b.port, "/account", headers: [("Authorization", "Bearer b")])
                #expect(alice.text == "Bearer a")
                #expect(bob.text == "Bearer b")
                #expect(origin.count("/account") == 2)
            }
        }

        /// A `public` response fetched by A is served by B from the shared tier (RFC 9111 §3).
        @Test func publicResponseIsSharedBetweenInstances() async throws {
            try await withTwoProxies { origin, a, b in
                origin.set(
                    "/shared",
                    Origin.Reply(headers: [("Cache-Control", "public, max-age=600")], body: Data("fleet".utf8)))
                _ = try await RawHTTP.request(port: a.port, "/shared")
                let fromB = try await RawHTTP.request(port: b.port, "/shared")
                #expect(fromB.text == "fleet")
                #expect(fromB.header("age") != nil)
                #expect(origin.count("/shared") == 1)
            }
        }

        /// A purge on one instance's admin listener removes the URL (and, with a prefix, every URL under
        /// it) from the shared tier: the other instance, whose local tiers never held them, refetches.
        @Test func purgeOnOneInstanceReachesTheSharedTier() async throws {
            let origin = try await Origin.start()
            let a = try await ServeProcess.start([
                "--origin", origin.url, "--shared", Self.databaseURL, "--metrics", "0",
            ])
            let b = try await ServeProcess.start(["--origin", origin.url, "--shared", Self.databaseURL])
            for path in ["/purged", "/tree/one", "/kept"] {
                origin.set(
                    path, Origin.Reply(headers: [("Cache-Control", "public, max-age=600")], body: Data(path.utf8)))
                _ = try await RawHTTP.request(port: a.port, path)
            }
            let admin = try #require(a.metricsPort)
            #expect(try await RawHTTP.request(port: admin, method: "PURGE", "/purged").status == 200)
            #expect(try await RawHTTP.request(port: admin, method: "PURGE", "/tree/*").status == 200)
            for path in ["/purged", "/tree/one", "/kept"] { _ = try await RawHTTP.request(port: b.port, path) }
            #expect(origin.count("/purged") == 2)
            #expect(origin.count("/tree/one") == 2)
            #expect(origin.count("/kept") == 1)
            await a.stop()
            await b.stop()
            await origin.stop()
        }

        /// `--shared-table` and `--shared-size-limit` configure the tier: two instances on one table
        /// share entries, an instance on the default table does not see them, and past the limit a
        /// store deletes the oldest entries of that table.
        @Test func tableAndSizeLimitComeFromTheCommandLine() async throws {
            let origin = try await Origin.start()
            for index in 0..<6 {
                origin.set(
                    "/p/\(index)",
                    Origin.Reply(
                        headers: [("Cache-Control", "public, max-age=600")],
                        body: Data(repeating: UInt8(65 + index), count: 1000)))
            }
            let table = "t_cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
            let options = ["--shared", Self.databaseURL, "--shared-table", table, "--shared-size-limit", "4KB"]
            let a = try await ServeProcess.start(["--origin", origin.url] + options)
            let b = try await ServeProcess.start(["--origin", origin.url] + options)
            let other = try await ServeProcess.start(["--origin", origin.url, "--shared", Self.databaseURL])
            for index in 0..<6 { _ = try await RawHTTP.request(port: a.port, "/p/\(index)") }
            // The newest entries are in the table; the limit (4,000 bytes) let at most four stay.
            let newest = try await RawHTTP.request(port: b.port, "/p/5")
            #expect(newest.body == Data(repeating: 70, count: 1000))
            #expect(origin.count("/p/5") == 1)
            let oldest = try await RawHTTP.request(port: b.port, "/p/0")
            #expect(oldest.body == Data(repeating: 65, count: 1000))
            #expect(origin.count("/p/0") == 2)
            // The default table never held them.
            _ = try await RawHTTP.request(port: other.port, "/p/4")
            #expect(origin.count("/p/4") == 2)
            for proxy in [a, b, other] { await proxy.stop() }
            await origin.stop()
        }

        /// A shared-tier option that can never work stops `stash serve` before it listens, with
        /// status 64 and a message that names the option.
        @Test(arguments: [
            (["--shared-timeout", "0"], "--shared-timeout"),
            (["--shared-timeout", "nan"], "--shared-timeout"),
            (["--shared-size-limit", "0B"], "--shared-size-limit"),
            (["--shared-table", "Stash-Entries"], "table name 'Stash-Entries'"),
        ])
        func invalidSharedTierOptionsAreRefused(options: [String], named: String) async throws {
            do {
                let proxy = try await ServeProcess.start(
                    ["--origin", "http://127.0.0.1:1", "--shared", Self.databaseURL] + options)
                await proxy.stop()
                Issue.record("stash serve started with \(options)")
            } catch {
                // ServeProcess's error for a process that exited before it listened.
                let description = "\(error)"
                #expect(description.hasPrefix("stash serve exited with 64:"), "\(description)")
                #expect(description.contains(named), "\(description)")
            }
        }
    }
#endif
