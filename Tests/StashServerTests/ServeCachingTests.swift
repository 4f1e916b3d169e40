#if Serve
    import Foundation
    import Testing

    /// `stash serve` as a shared cache (RFC 9111), run as a child process in front of a real origin.
    @Suite(.serialized)
    struct ServeCachingTests {
        static let cacheable = Origin.Reply(
            headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")], body: Data("hello".utf8))

        /// RFC 9111 §4.2: a fresh stored response is served without contacting the origin.
        @Test func freshHitDoesNotReachTheOrigin() async throws {
            try await withProxy { origin, proxy in
                origin.set("/a", Self.cacheable)
                let first = try await RawHTTP.request(port: proxy.port, "/a")
                let second = try await RawHTTP.request(port: proxy.port, "/a")
                #expect(first.status == 200)
                #expect(second.status == 200)
                #expect(second.text == "hello")
                #expect(second.header("content-type") == "text/plain")
                #expect(origin.count("/a") == 1)
            }
        }

        /// RFC 9111 §4.2.3 and §5.1: a response from the cache carries `Age`, including the age the
        /// origin reported.
        @Test func servedResponseCarriesItsAge() async throws {
            try await withProxy { origin, proxy in
                var reply = Self.cacheable
                reply.headers.append(("Age", "100"))
                origin.set("/aged", reply)
                _ = try await RawHTTP.request(port: proxy.port, "/aged")
                let hit = try await RawHTTP.request(port: proxy.port, "/aged")
                let age = try #require(hit.header("age").flatMap { Int($0) })
                #expect(age >= 100 && age < 110)
                #expect(hit.values("age").count == 1)
                #expect(origin.count("/aged") == 1)
            }
        }

        /// RFC 9111 §3.5 and §5.2.2.7: a shared cache never stores a `private` response.
        @Test func privateResponseIsNeverServedToAnotherRequest() async throws {
            try await withProxy { origin, proxy in
                origin.route("/me") { request, _ in
                    Origin.Reply(
                        headers: [("Cache-Control", "private, max-age=600")],
                        body: Data((request.header("x-user") ?? "?").utf8))
                }
                let alice = try await RawHTTP.request(port: proxy.port, "/me", headers: [("X-User", "alice")])
                let bob = try await RawHTTP.request(port: proxy.port, "/me", headers: [("X-User", "bob")])
                #expect(alice.text == "alice")
                #expect(bob.text == "bob")
                #expect(origin.count("/me") == 2)
            }
        }

        /// RFC 9111 §3.5: a response to a request with `Authorization` is not stored by a shared
        /// cache unless `public`, `s-maxage` or `must-revalidate` allows it.
        @Test func authorizedResponseIsNotServedToAnotherUser() async throws {
            try await withProxy { origin, proxy in
                origin.route("/account") { request, _ in
                    Origin.Reply(
                        headers: [("Cache-Control", "max-age=600")],
                        body: Data((request.header("authorization") ?? "anonymous").utf8))
                }
                let alice = try await RawHTTP.request(
                    port: proxy.port, "/account", headers: [("Authorization", "Bearer alice")])
                let bob = try await RawHTTP.request(
                    port: proxy.port, "/account", headers: [("Authorization", "Bearer bob")])
                let anonymous = try await RawHTTP.request(port: proxy.port, "/account")
                #expect(alice.text == "Bearer alice")
                #expect(bob.text == "Bearer bob")
                #expect(anonymous.text == "anonymous")
                #expect(origin.count("/account") == 3)
            }
        }

        /// RFC 9111 §3.5: `public` lets a shared cache store a response to an authorized request.
        @Test func publicAuthorizedResponseIsShared() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/logo",
                    Origin.Reply(headers: [("Cache-Control", "public, max-age=600")], body: Data("logo".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/logo", headers: [("Authorization", "Bearer a")])
                let second = try await RawHTTP.request(
                    port: proxy.port, "/logo", headers: [("Authorization", "Bearer b")])
                #expect(second.text == "logo")
                #expect(origin.count("/logo") == 1)
            }
        }

        /// RFC 9111 §4.1: a response with `Vary` is reused only for requests with the same values;
        /// several variants are kept side by side.
        @Test func varyKeepsOneVariantPerRequestValue() async throws {
            try await withProxy { origin, proxy in
                origin.route("/greeting") { request, _ in
                    let language = request.header("accept-language") ?? "en"
                    return Origin.Reply(
                        headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")],
                        body: Data((language == "fr" ? "bonjour" : "hello").utf8))
                }
                let english = try await RawHTTP.request(
                    port: proxy.port, "/greeting", headers: [("Accept-Language", "en")])
                let french = try await RawHTTP.request(
                    port: proxy.port, "/greeting", headers: [("Accept-Language", "fr")])
                let englishAgain = try await RawHTTP.request(
                    port: proxy.port, "/greeting", headers: [("Accept-Language", "en")])
                let frenchAgain = try await RawHTTP.request(
                    port: proxy.port, "/greeting", headers: [("Accept-Language", "fr")])
                #expect(english.text == "hello")
                #expect(french.text == "bonjour")
                #expect(englishAgain.text == "hello")
                #expect(frenchAgain.text == "bonjour")
                #expect(origin.count("/greeting") == 2)
            }
        }

        /// RFC 9111 §4.4: a successful unsafe request invalidates the stored responses of its URL.
        @Test func unsafeMethodInvalidatesTheURL() async throws {
            try await withProxy { origin, proxy in
                origin.route("/doc") { _, count in
                    Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Data("v\(count)".utf8))
                }
                _ = try await RawHTTP.request(port: proxy.port, "/doc")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v1")
                let post = try await RawHTTP.request(port: proxy.port, method: "POST", "/doc", body: Data("new".utf8))
                #expect(post.status == 200)
                let after = try await RawHTTP.request(port: proxy.port, "/doc")
                #expect(after.text == "v3")
                #expect(origin.count("/doc") == 3)
            }
        }

        /// RFC 9111 §4.4: a miss fetched before a successful unsafe request answers no request after it.
        ///
        /// A request that arrives after the `POST` and waits for that fill gets the new version,
        /// not the one fetched before; the fill's own client still gets its answer. With the
        /// memory tier alone and with a disk tier.
        @Test(arguments: [false, true])
        func aFillUnderWayWhenItsURLIsInvalidatedAnswersNoLaterRequest(onDisk: Bool) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-fill-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(onDisk ? ["--dir", directory.path] : []) { origin, proxy in
                let document = VersionedDocument(origin: origin, path: "/doc", holding: [1])
                let early = Task { try await RawHTTP.request(port: proxy.port, "/doc") }
                #expect(await eventually { document.arrived(1) == 1 })
                document.set(2)
                let post = try await RawHTTP.request(port: proxy.port, method: "POST", "/doc", body: Data("new".utf8))
                #expect(post.status == 200)
                let late = Task { try await RawHTTP.request(port: proxy.port, "/doc") }
                // Time for the late request to reach the fill's wait. Should it get there only after
                // the fill ended, the stored answer it would find is the one this test forbids as
                // well: the pause can let the test miss the follower's path, never fail it.
                try await Task.sleep(for: .milliseconds(300))
                document.release(1)
                #expect(try await early.value.text == "v1")
                #expect(try await late.value.text == "v2")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v2")
                #expect(document.arrived(1) == 1)
            }
        }

        /// RFC 9111 §4.4: a follower whose leader's answer was discarded by an invalidation fetches
        /// as a fill of its own, which a later invalidation reaches too.
        ///
        /// The follower's fetch (v2) is held at the origin while a second `POST` makes v3 current:
        /// its client gets v2, and the next request gets v3, never v2 from the cache. With the
        /// memory tier alone and with a disk tier.
        @Test(arguments: [false, true])
        func aFollowerThatFetchesAfterADiscardedFillIsReachedByTheNextInvalidation(onDisk: Bool) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-fill-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(onDisk ? ["--dir", directory.path] : []) { origin, proxy in
                let document = VersionedDocument(origin: origin, path: "/doc", holding: [1, 2])
                let leader = Task { try await RawHTTP.request(port: proxy.port, "/doc") }
                #expect(await eventually { document.arrived(1) == 1 })
                let follower = Task { try await RawHTTP.request(port: proxy.port, "/doc") }
                // Time for the follower to reach the fill's wait. Should it get there only after the
                // fill ended, it leads a fill of its own, the path under test as well.
                try await Task.sleep(for: .milliseconds(300))
                document.set(2)
                #expect(try await RawHTTP.request(port: proxy.port, method: "POST", "/doc").status == 200)
                document.release(1)
                #expect(try await leader.value.text == "v1")
                #expect(await eventually { document.arrived(2) == 1 })
                document.set(3)
                #expect(try await RawHTTP.request(port: proxy.port, method: "POST", "/doc").status == 200)
                document.release(2)
                #expect(try await follower.value.text == "v2")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v3")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v3")
                #expect(origin.count("/doc") == 3 + 2)
            }
        }

        /// RFC 9111 §4.4: a revalidation sent before an invalidation does not store its answer after
        /// it.
        ///
        /// A request with `Cache-Control: no-cache` (§5.2.1.4) revalidates the stored v1; the origin
        /// holds its answer (v2) while a `POST` makes v3 current. The request still gets v2, and the
        /// next one gets v3, never v2 from the cache.
        @Test func aRevalidationUnderWayWhenItsURLIsInvalidatedStoresNothing() async throws {
            try await withProxy { (origin: Origin, proxy: ServeProcess) async throws in
                let document = VersionedDocument(origin: origin, path: "/doc", holding: [2]) { version in
                    [("Cache-Control", "max-age=600"), ("ETag", "\"\(version)\"")]
                }
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v1")
                document.set(2)
                let revalidation = Task { () async throws -> RawHTTP.Response in
                    try await RawHTTP.request(port: proxy.port, "/doc", headers: [("Cache-Control", "no-cache")])
                }
                #expect(await eventually { document.arrived(2) == 1 })
                #expect(origin.requests("/doc").last?.header("if-none-match") == "\"1\"")
                document.set(3)
                #expect(try await RawHTTP.request(port: proxy.port, method: "POST", "/doc").status == 200)
                document.release(2)
                #expect(try await revalidation.value.text == "v2")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v3")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v3")
                #expect(origin.count("/doc") == 3 + 1)
            }
        }

        /// RFC 9111 §4.4: a revalidation that finds another revalidation of its URL under way (it
        /// leads no fill) stores nothing, so that an invalidation after its request was sent never
        /// has its answer stored after it.
        ///
        /// v1 is stored stale. A leads the revalidation (the origin holds its v2); B finds it under
        /// way and revalidates for itself (the origin holds its v3). A's answer is stored and its
        /// fill ends; a `POST` then makes v4 current, and B's v3 comes after it. B still gets v3,
        /// but the next request gets v4, never v3 from the cache. (Were A's fill still under way
        /// when B's answer came, the old code would have refused B's store too: the test can then
        /// miss the bug, never fail on correct code.)
        @Test func aRevalidationThatLeadsNoFillStoresNothing() async throws {
            try await withProxy { (origin: Origin, proxy: ServeProcess) async throws in
                let document = VersionedDocument(origin: origin, path: "/doc", holding: [2, 3]) { version in
                    [("Cache-Control", version == 1 ? "max-age=0" : "max-age=600"), ("ETag", "\"\(version)\"")]
                }
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v1")
                document.set(2)
                let a = Task { () async throws -> RawHTTP.Response in
                    try await RawHTTP.request(port: proxy.port, "/doc")
                }
                #expect(await eventually { document.arrived(2) == 1 })
                document.set(3)
                let b = Task { () async throws -> RawHTTP.Response in
                    try await RawHTTP.request(port: proxy.port, "/doc")
                }
                #expect(await eventually { document.arrived(3) == 1 })
                #expect(origin.requests("/doc").last?.header("if-none-match") == "\"1\"")
                document.release(2)
                #expect(try await a.value.text == "v2")
                document.set(4)
                #expect(try await RawHTTP.request(port: proxy.port, method: "POST", "/doc").status == 200)
                document.release(3)
                #expect(try await b.value.text == "v3")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v4")
                #expect(try await RawHTTP.request(port: proxy.port, "/doc").text == "v4")
                #expect(origin.count("/doc") == 4 + 1)
            }
        }

        /// RFC 9111 §4.3.4: a `304` to a revalidation updates the stored headers, and the stored body
        /// is served with them.
        @Test func notModifiedUpdatesStoredHeaders() async throws {
            try await withProxy { origin, proxy in
                origin.route("/v") { request, count in
                    if request.header("if-none-match") == "\"1\"" {
                        return Origin.Reply(
                            status: 304,
                            headers: [("ETag", "\"1\""), ("X-Version", "\(count)"), ("Cache-Control", "max-age=0")])
                    }
                    return Origin.Reply(
                        headers: [("ETag", "\"1\""), ("X-Version", "\(count)"), ("Cache-Control", "max-age=0")],
                        body: Data("body".utf8))
                }
                let first = try await RawHTTP.request(port: proxy.port, "/v")
                let second = try await RawHTTP.request(port: proxy.port, "/v")
                #expect(first.header("x-version") == "1")
                #expect(second.status == 200)
                #expect(second.text == "body")
                #expect(second.header("x-version") == "2")
                let requests = origin.requests("/v")
                #expect(requests.count == 2)
                #expect(requests.last?.header("if-none-match") == "\"1\"")
            }
        }

        /// RFC 9111 §5.2.1.7: `only-if-cached` with nothing stored is a `504`, and the origin is not asked.
        @Test func onlyIfCachedMissIsGatewayTimeout() async throws {
            try await withProxy { origin, proxy in
                origin.set("/cold", Self.cacheable)
                let miss = try await RawHTTP.request(
                    port: proxy.port, "/cold", headers: [("Cache-Control", "only-if-cached")])
                #expect(miss.status == 504)
                #expect(origin.count("/cold") == 0)
                _ = try await RawHTTP.request(port: proxy.port, "/cold")
                let hit = try await RawHTTP.request(
                    port: proxy.port, "/cold", headers: [("Cache-Control", "only-if-cached")])
                #expect(hit.status == 200)
                #expect(origin.count("/cold") == 1)
            }
        }

        /// RFC 9111 §3: `no-store` is never stored.
        @Test func noStoreIsNotStored() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/ns", Origin.Reply(headers: [("Cache-Control", "no-store, max-age=600")], body: Data("x".utf8)))
                _ = try await RawHTTP.request(port: proxy.port, "/ns")
                _ = try await RawHTTP.request(port: proxy.port, "/ns")
                #expect(origin.count("/ns") == 2)
            }
        }

        /// The disk tier outlives the process: a restarted proxy on the same `--dir` serves the stored
        /// response without the origin (RFC 9111 §3, a stored response with its headers).
        @Test func diskTierServesAfterRestart() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let origin = try await Origin.start()
            defer { Task { await origin.stop() } }
            var reply = Self.cacheable
            reply.body = Data(repeating: 7, count: 100_000)
            origin.set("/big", reply)
            origin.set("/small", Self.cacheable)
            let first = try await ServeProcess.start(["--origin", origin.url, "--dir", directory.path])
            _ = try await RawHTTP.request(port: first.port, "/big")
            _ = try await RawHTTP.request(port: first.port, "/small")
            await first.stop()
            let second = try await ServeProcess.start([
                "--origin", origin.url, "--dir", directory.path, "--memory-limit", "256KiB",
            ])
            let big = try await RawHTTP.request(port: second.port, "/big")
            let small = try await RawHTTP.request(port: second.port, "/small")
            await second.stop()
            #expect(big.body == reply.body)
            #expect(big.header("age") != nil)
            #expect(small.text == "hello")
            #expect(origin.count("/big") == 1)
            #expect(origin.count("/small") == 1)
        }
    }
#endif
