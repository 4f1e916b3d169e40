#if Serve
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Interim (1xx) responses between the origin, the proxy and its clients (RFC 9110 §15.2,
    /// §10.1.1; RFC 9111 §3).
    @Suite(.serialized)
    struct ServeInterimTests {
        /// An origin that answers every request with `interim` heads, then a cacheable `200`.
        static func origin(interim: [String]) throws -> RawOrigin {
            try RawOrigin.start { _, connection in
                for head in interim { try connection.send(head + "\r\n") }
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Type: text/plain\r\n"
                        + "Content-Length: 5\r\nConnection: close\r\n\r\nfinal")
            }
        }

        static func withRawProxy<T>(
            origin: RawOrigin, _ body: (ServeProcess) async throws -> T
        ) async throws -> T {
            defer { origin.stop() }
            return try await ServeProcess.running(["--origin", origin.url], body)
        }

        /// The final response in `raw`, past any interim (1xx) heads before it.
        static func finalResponse(_ raw: Data) throws -> RawHTTP.Response {
            var rest = raw[...]
            while rest.starts(with: Data("HTTP/1.1 1".utf8)), let end = rest.range(of: Data("\r\n\r\n".utf8)) {
                rest = rest[end.upperBound...]
            }
            return try #require(RawHTTP.parse(Data(rest)).first)
        }

        /// The interim (1xx) heads at the start of `raw`, as text, in the order they came.
        static func interimHeads(_ raw: Data) -> [String] {
            var heads: [String] = []
            var rest = raw[...]
            while rest.starts(with: Data("HTTP/1.1 1".utf8)), let end = rest.range(of: Data("\r\n\r\n".utf8)) {
                heads.append(String(decoding: rest[..<end.upperBound], as: UTF8.self))
                rest = rest[end.upperBound...]
            }
            return heads
        }

        /// RFC 9110 §15.2: a proxy forwards the 1xx responses it did not ask for, and a client reads
        /// any number of them before the final response; RFC 9111 §3: only the final response is
        /// stored.
        ///
        /// The client gets the origin's `102` and `103` heads, in order and with their fields (the
        /// `Link` of `103 (Early Hints)`, RFC 8297), then the `200`; the second request is a hit with
        /// no interim response at all, and the origin was asked once.
        @Test(arguments: [
            ["HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n"],
            [
                "HTTP/1.1 102 Processing\r\n",
                "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload; as=style\r\n",
                "HTTP/1.1 103 Early Hints\r\nLink: </b.js>; rel=preload; as=script\r\n",
            ],
        ])
        func interimResponsesAreRelayedBeforeTheFinalOneAndNeverFromTheCache(interim: [String]) async throws {
            let origin = try Self.origin(interim: interim)
            try await Self.withRawProxy(origin: origin) { proxy in
                let request = Data("GET /hints HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8)
                let miss = try await RawHTTP.exchange(port: proxy.port, send: request)
                let relayed = Self.interimHeads(miss)
                #expect(relayed.count == interim.count)
                for (sent, got) in zip(interim, relayed) {
                    // The status code; the reason phrase is optional (RFC 9112 §4).
                    #expect(got.prefix(13) == sent.prefix(13))
                    for line in sent.components(separatedBy: "\r\n").dropFirst() where !line.isEmpty {
                        #expect(got.lowercased().contains("\r\n" + line.lowercased() + "\r\n"), "\(line)")
                    }
                    #expect(got.contains("\r\nVia: 1.1 stash\r\n"))
                }
                let final = try Self.finalResponse(miss)
                #expect(final.status == 200)
                #expect(final.text == "final")
                #expect(final.header("link") == nil)

                let hit = try await RawHTTP.exchange(port: proxy.port, send: request)
                #expect(String(decoding: hit.prefix(12), as: UTF8.self) == "HTTP/1.1 200")
                #expect(Self.interimHeads(hit).isEmpty)
                #expect(try Self.finalResponse(hit).text == "final")
                #expect(origin.requests.count == 1)
            }
        }

        /// RFC 9110 §10.1.1 and §15.2.1: the proxy answers the client's `Expect: 100-continue` with
        /// its own `100 (Continue)`, so the origin's `100` for the same expectation is not relayed
        /// as a second one.
        @Test func theOriginsContinueIsNotRelayedAfterTheProxysOwn() async throws {
            let origin = try Self.origin(interim: ["HTTP/1.1 100 Continue\r\n"])
            try await Self.withRawProxy(origin: origin) { proxy in
                let raw = try await RawHTTP.exchange(
                    port: proxy.port,
                    send: Data(
                        ("POST /form HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n"
                            + "Connection: close\r\n\r\nhi").utf8))
                #expect(Self.interimHeads(raw).map { String($0.prefix(12)) } == ["HTTP/1.1 100"])
                #expect(try Self.finalResponse(raw).text == "final")
                #expect(origin.requests.first?.lowercased().contains("expect: 100-continue") == true)
            }
        }

        /// RFC 9111 §3 (a cache stores only final responses) and RFC 9110 §15.2 (a 1xx is never the
        /// answer): after `100`, `102` or `103` heads, the client gets the origin's final `200`, with
        /// none of the interim fields, the `200` alone is stored, and the next request is a hit that
        /// carries no interim field either.
        @Test(arguments: [
            "HTTP/1.1 100 Continue\r\n",
            "HTTP/1.1 102 Processing\r\n",
            "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\nX-Interim: 1\r\n",
        ])
        func interimResponsesAreNeitherStoredNorServedAsTheAnswer(interim: String) async throws {
            let origin = try Self.origin(interim: [interim, interim])
            try await Self.withRawProxy(origin: origin) { proxy in
                for attempt in 1...2 {
                    let raw = try await RawHTTP.exchange(
                        port: proxy.port, send: Data("GET /i HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
                    let response = try Self.finalResponse(raw)
                    #expect(response.status == 200, "request \(attempt)")
                    #expect(response.text == "final", "request \(attempt)")
                    #expect(response.header("x-interim") == nil, "request \(attempt)")
                    #expect(response.header("link") == nil, "request \(attempt)")
                    #expect(response.header("cache-control") == "max-age=600", "request \(attempt)")
                }
                #expect(origin.requests.count == 1)
            }
        }

        /// RFC 9110 §15.2.2: the proxy never forwards `Upgrade`, so a `101 (Switching Protocols)`
        /// from the origin answers a request nobody made.
        ///
        /// The client gets `502`, never the `101` (which would tell it the connection left HTTP), and
        /// nothing is stored: the next request goes to the origin again.
        @Test func switchingProtocolsFromTheOriginIsABadGateway() async throws {
            let origin = try RawOrigin.start { _, connection in
                try connection.send(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Cache-Control: max-age=600\r\n\r\nnot http")
            }
            try await Self.withRawProxy(origin: origin) { proxy in
                for attempt in 1...2 {
                    let raw = try await RawHTTP.exchange(
                        port: proxy.port,
                        send: Data("GET /switch HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
                    #expect(String(decoding: raw.prefix(12), as: UTF8.self) == "HTTP/1.1 502", "request \(attempt)")
                }
                #expect(origin.requests.count == 2)
            }
        }

        /// RFC 9110 §15.2: a server must not send a 1xx response to an HTTP/1.0 client; the first
        /// bytes an HTTP/1.0 client gets are the final status line.
        @Test func anHTTP10ClientGetsNoInterimResponse() async throws {
            let origin = try Self.origin(interim: [
                "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n"
            ])
            try await Self.withRawProxy(origin: origin) { proxy in
                let raw = try await RawHTTP.exchange(
                    port: proxy.port,
                    send: Data(
                        "POST /form HTTP/1.0\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi".utf8))
                #expect(String(decoding: raw.prefix(12), as: UTF8.self) == "HTTP/1.1 200")
                #expect(try Self.finalResponse(raw).text == "final")
            }
        }

        /// RFC 9110 §10.1.1: an HTTP/1.1 client that sent `Expect: 100-continue` waits for
        /// `100 (Continue)` before its content; the proxy sends it as it starts forwarding, and the
        /// origin then gets the content.
        @Test func expectContinueGetsContinueBeforeTheContentIsSent() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/upload", Origin.Reply(headers: [("Content-Type", "text/plain")], body: Data("stored".utf8)))
                let (interim, final) = try await RawHTTP.onThread { () -> (String, Data) in
                    let socket = try RawHTTP.connect(port: proxy.port, timeout: 10)
                    defer { close(socket) }
                    try RawHTTP.write(
                        socket,
                        Data(
                            ("PUT /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 7\r\n"
                                + "Connection: close\r\n\r\n").utf8))
                    // The content is sent only once the interim head is read (or the read times out).
                    var head = Data()
                    var byte: UInt8 = 0
                    while !head.suffix(4).elementsEqual("\r\n\r\n".utf8), recv(socket, &byte, 1, 0) == 1 {
                        head.append(byte)
                    }
                    try RawHTTP.write(socket, Data("content".utf8))
                    return (String(decoding: head, as: UTF8.self), RawHTTP.readToEnd(socket))
                }
                #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"))
                let response = try #require(RawHTTP.parse(final).first)
                #expect(response.status == 200)
                #expect(response.text == "stored")
                #expect(origin.requests("/upload").first?.body == Data("content".utf8))
            }
        }
    }
#endif
