#if Serve
    import Foundation
    import Testing

    /// The proxy's connections to a plain-`http` origin: persistent connections (RFC 9112 §9.3),
    /// reused only after a complete response that does not close them, and interim responses on a
    /// reused connection (RFC 9110 §15.2).
    @Suite(.serialized)
    struct ServeOriginConnectionTests {
        static func get(_ target: String, port: Int) async throws -> Data {
            try await RawHTTP.exchange(
                port: port, send: Data("GET \(target) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n".utf8))
        }

        /// RFC 9112 §9.3: an HTTP/1.1 response without `Connection: close` leaves the connection
        /// open, and the proxy sends its next request on it; every request still reaches the origin
        /// (`no-store`), in order, over one connection.
        @Test func completeResponsesLeaveTheConnectionForTheNextRequest() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                try connection.send("HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: 2\r\n\r\nok")
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                for index in 1...3 {
                    let raw = try await Self.get("/k\(index)", port: proxy.port)
                    #expect(try #require(RawHTTP.parse(raw).first).text == "ok", "request \(index)")
                }
                #expect(origin.requests.map { $0.prefix(8) } == ["GET /k1 ", "GET /k2 ", "GET /k3 "])
                #expect(origin.connections == 1)
            }
        }

        /// An origin that announces `Keep-Alive: timeout=1` closes an idle connection within a
        /// second; the proxy keeps a connection a second short of that, so it does not reuse this one
        /// and opens a new connection for the next request (RFC 9112 §9.3: a client must be ready
        /// for the server to close an idle connection; it need not race it).
        @Test func aShortKeepAliveTimeoutIsNotRaced() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nKeep-Alive: timeout=1\r\nContent-Length: 2\r\n\r\nok"
                )
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                for index in 1...2 {
                    let raw = try await Self.get("/short\(index)", port: proxy.port)
                    let response = try #require(RawHTTP.parse(raw).first)
                    #expect(response.text == "ok", "request \(index)")
                    #expect(response.header("keep-alive") == nil, "a hop-by-hop field, not relayed")
                }
                #expect(origin.requests.count == 2)
                #expect(origin.connections == 2)
            }
        }

        /// RFC 9112 §9.6: after a response with `Connection: close` the origin closes the
        /// connection, so the proxy opens a new one for the next request; a body delimited by the
        /// close (no `Content-Length`, RFC 9112 §6.3) is relayed whole.
        @Test func aConnectionTheOriginClosesIsNotReused() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { head, connection in
                if head.hasPrefix("GET /close ") {
                    try connection.send(
                        "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: 5\r\n\r\nclose"
                    )
                } else {
                    try connection.send(
                        "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nConnection: close\r\n\r\nuntil-eof")
                }
                throw RawHTTP.Failure(description: "closing")  // ends the connection's loop
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                let closed = try await Self.get("/close", port: proxy.port)
                #expect(try #require(RawHTTP.parse(closed).first).text == "close")
                let untilEOF = try await Self.get("/eof", port: proxy.port)
                #expect(try #require(RawHTTP.parse(untilEOF).first).text == "until-eof")
                let again = try await Self.get("/close", port: proxy.port)
                #expect(try #require(RawHTTP.parse(again).first).text == "close")
                #expect(origin.requests.count == 3)
                #expect(origin.connections == 3)
            }
        }

        /// RFC 9110 §15.2: interim responses on a kept-alive connection belong to the request they
        /// precede: each of two requests gets its own `103` and `200`, over one connection.
        @Test func interimResponsesOnAReusedConnection() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { head, connection in
                let name = head.hasPrefix("GET /one ") ? "one" : "two"
                try connection.send(
                    "HTTP/1.1 103 Early Hints\r\nLink: </\(name).css>; rel=preload; as=style\r\n\r\n"
                        + "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: 3\r\n\r\n\(name)")
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                for name in ["one", "two"] {
                    let raw = try await Self.get("/\(name)", port: proxy.port)
                    let interim = ServeInterimTests.interimHeads(raw)
                    #expect(interim.count == 1, "\(name)")
                    #expect(interim.first?.contains("</\(name).css>") == true, "\(name)")
                    #expect(try ServeInterimTests.finalResponse(raw).text == name)
                }
                #expect(origin.connections == 1)
            }
        }
    }
#endif
