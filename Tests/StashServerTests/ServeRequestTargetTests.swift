#if Serve
    import Foundation
    import Testing

    /// Request targets, `Host` and `Upgrade` as RFC 9112 §3.2–3.3 and RFC 9110 §7.8 require, and the
    /// forwarding fields of RFC 7239, probed as an attacker would with raw bytes.
    @Suite(.serialized)
    struct ServeRequestTargetTests {
        /// RFC 9112 §3.2.2: an absolute-form target naming the origin is served as its path; one that
        /// names another host gets `400` and never reaches the origin; a configured alias is accepted.
        @Test func absoluteFormIsAcceptedForTheOriginAndItsAliasesOnly() async throws {
            try await withProxy(["--alias", "cdn.example"]) { origin, proxy in
                origin.set("/abs", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("abs".utf8)))
                let own = try await RawHTTP.request(port: proxy.port, "http://127.0.0.1:\(origin.port)/abs")
                #expect(own.status == 200)
                #expect(own.text == "abs")
                let alias = try await RawHTTP.request(port: proxy.port, "http://CDN.example/abs")
                #expect(alias.status == 200)
                #expect(origin.requests("/abs").map(\.path) == ["/abs", "/abs"])
                let other = try await RawHTTP.request(port: proxy.port, "http://evil.example/abs")
                #expect(other.status == 400)
                #expect(other.header("connection") == "close")
                #expect(origin.count("/abs") == 2)
            }
        }

        /// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, or with two, gets `400` and the connection
        /// closes; HTTP/1.0 may leave `Host` out.
        @Test func missingOrRepeatedHostIsRefused() async throws {
            try await withProxy { origin, proxy in
                origin.set("/h", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("h".utf8)))
                let missing = RawHTTP.parse(
                    try await RawHTTP.exchange(port: proxy.port, send: Data("GET /h HTTP/1.1\r\n\r\n".utf8)))
                #expect(missing.map(\.status) == [400])
                let twice = RawHTTP.parse(
                    try await RawHTTP.exchange(
                        port: proxy.port, send: Data("GET /h HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n".utf8)))
                #expect(twice.map(\.status) == [400])
                let old = RawHTTP.parse(
                    try await RawHTTP.exchange(port: proxy.port, send: Data("GET /h HTTP/1.0\r\n\r\n".utf8)))
                #expect(old.map(\.status) == [200])
                #expect(origin.count("/h") == 1)
            }
        }

        /// RFC 9110 §7.2 (`Host = uri-host [ ":" port ]`) and RFC 9112 §3.2: the `Host` field is found
        /// in any case, and each value is judged the same whether it has the common shape (a name or
        /// address with an optional port, checked in one pass) or needs the full parse (brackets,
        /// an empty port, a port out of range, a list, userinfo, a space).
        @Test func hostValuesAreJudgedByTheirSyntax() async throws {
            try await withProxy { origin, proxy in
                origin.set("/v", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("v".utf8)))
                func status(_ fields: String) async throws -> [Int] {
                    let raw = try await RawHTTP.exchange(
                        port: proxy.port, send: Data("GET /v HTTP/1.1\r\n\(fields)Connection: close\r\n\r\n".utf8))
                    return RawHTTP.parse(raw).map(\.status)
                }
                let accepted = [
                    "Host: a\r\n", "hOsT: Example.COM:80\r\n", "Host: 10.0.0.1:65535\r\n", "Host: [::1]:8080\r\n",
                    "Host: [::1]\r\n", "Host: a:\r\n", "Host: xn--bcher-kva.example\r\n", "Host: a_b\r\n",
                ]
                for fields in accepted {
                    let got = try await status(fields)
                    #expect(got == [200], "\(fields)")
                }
                let refused = [
                    "Host: a\r\nhost: a\r\n", "Host: a:65536\r\n", "Host: a:123456\r\n", "Host: a:8x\r\n",
                    "Host: :80\r\n", "Host: a b\r\n", "Host: a,b\r\n", "Host: u@a\r\n", "Host: a/b\r\n",
                    "Host: [::1\r\n", "Host: []:80\r\n", "Host: [::1]:x\r\n",
                ]
                for fields in refused {
                    let got = try await status(fields)
                    #expect(got == [400], "\(fields)")
                }
                #expect(origin.count("/v") == accepted.count)
            }
        }

        /// RFC 9110 §4.2.4 and §4.2.5, RFC 9112 §3.2: userinfo and a fragment in the target get `400`.
        @Test func userinfoAndFragmentAreRefused() async throws {
            try await withProxy { origin, proxy in
                origin.set("/u", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("u".utf8)))
                let userinfo = try await RawHTTP.request(port: proxy.port, "http://user@127.0.0.1:\(origin.port)/u")
                #expect(userinfo.status == 400)
                let fragment = try await RawHTTP.request(port: proxy.port, "/u#part")
                #expect(fragment.status == 400)
                #expect(origin.count("/u") == 0)
            }
        }

        /// RFC 9112 §2.3 and §3: an HTTP/0.9 request (no version) gets `400` and a closed connection.
        @Test func http09RequestIsRefusedAndClosed() async throws {
            try await withProxy { _, proxy in
                let started = Date()
                let raw = try await RawHTTP.exchange(port: proxy.port, send: Data("GET /\r\n\r\n".utf8), timeout: 8)
                #expect(String(decoding: raw, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
                #expect(Date().timeIntervalSince(started) < 5, "the connection was not closed")
            }
        }

        /// RFC 9110 §7.8: `Upgrade` is ignored and never forwarded (it is hop-by-hop, §7.6.1); the
        /// connection goes on answering the requests after it.
        @Test func upgradeIsIgnoredAndTheConnectionKeepsServing() async throws {
            try await withProxy { origin, proxy in
                origin.set("/a", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("a".utf8)))
                origin.set("/b", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("b".utf8)))
                let raw =
                    "GET /a HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
                    + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                let responses = RawHTTP.parse(try await RawHTTP.exchange(port: proxy.port, send: Data(raw.utf8)))
                #expect(responses.map(\.status) == [200, 200, 200])
                #expect(responses.map(\.text) == ["a", "b", "a"])
                let first = try #require(origin.requests("/a").first)
                #expect(first.header("upgrade") == nil)
                #expect(first.header("http2-settings") == nil)
            }
        }

        /// RFC 7239: a client's own `Forwarded` and `X-Forwarded-*` never reach the origin; the proxy
        /// sets its own, with a `host` only when `Host` names the origin.
        @Test func clientForwardingFieldsAreReplaced() async throws {
            try await withProxy { origin, proxy in
                origin.set("/f", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("f".utf8)))
                _ = try await RawHTTP.request(
                    port: proxy.port, "/f",
                    headers: [
                        ("X-Forwarded-Host", "evil.example"), ("Forwarded", "host=evil.example;for=1.2.3.4"),
                        ("X-Forwarded-For", "1.2.3.4"), ("X-Forwarded-Proto", "https"),
                    ])
                let received = try #require(origin.requests("/f").first)
                #expect(received.header("x-forwarded-for") == "127.0.0.1")
                #expect(received.header("x-forwarded-proto") == "http")
                #expect(received.header("x-forwarded-host") == nil)
                #expect(received.header("forwarded") == "for=127.0.0.1;proto=http")
            }
        }

        /// RFC 7239 §4: from a trusted peer (`--trust-forwarded`) the fields are kept and the peer's
        /// address is appended.
        @Test func trustedPeersForwardingFieldsAreKeptAndExtended() async throws {
            try await withProxy(["--trust-forwarded", "127.0.0.0/8"]) { origin, proxy in
                origin.set("/t", Origin.Reply(headers: [("Cache-Control", "no-store")], body: Data("t".utf8)))
                _ = try await RawHTTP.request(
                    port: proxy.port, "/t",
                    headers: [
                        ("X-Forwarded-Host", "www.example"), ("Forwarded", "for=192.0.2.1;host=www.example"),
                        ("X-Forwarded-For", "192.0.2.1"),
                    ])
                let received = try #require(origin.requests("/t").first)
                #expect(received.header("x-forwarded-for") == "192.0.2.1, 127.0.0.1")
                #expect(received.header("x-forwarded-host") == "www.example")
                #expect(received.header("forwarded") == "for=192.0.2.1;host=www.example, for=127.0.0.1")
            }
        }

        /// A range that does not parse is a usage error naming the option.
        @Test func badTrustedRangeIsAUsageError() async throws {
            let origin = try await Origin.start()
            defer { Task { await origin.stop() } }
            do {
                let proxy = try await ServeProcess.start(["--origin", origin.url, "--trust-forwarded", "10.0.0.0/99"])
                await proxy.stop()
                Issue.record("stash serve started with a bad --trust-forwarded")
            } catch {
                #expect("\(error)".contains("10.0.0.0/99"))
            }
        }
    }
#endif
