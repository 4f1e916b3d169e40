#if Serve
    import Foundation
    import Testing

    /// Retrying a request whose reused origin connection closed before any byte of a response (RFC
    /// 9110 §9.2.2, RFC 9112 §9.3.1).
    @Suite(.serialized)
    struct ServeOriginRetryTests {
        static let ok = "HTTP/1.1 200 OK\r\nCache-Control: no-store\r\nContent-Length: 2\r\n\r\nok"

        /// An origin that answers every request but the first one for `path`: that one it reads and
        /// then closes the connection without a byte, as an origin closing an idle connection does
        /// when the request crosses its close.
        static func closingOnce(_ path: String) throws -> RawOrigin {
            let seen = Locked(0)
            return try RawOrigin.start(keepAlive: true) { head, connection in
                if head.contains(" \(path) ") {
                    let count = seen.withLock { seen -> Int in
                        seen += 1
                        return seen
                    }
                    if count == 1 { throw RawHTTP.Failure(description: "closed before the response") }
                }
                try connection.send(Self.ok)
            }
        }

        /// RFC 9110 §9.2.2, RFC 9112 §9.3.1: a `GET` sent on a reused connection that the origin
        /// closes before answering is sent once more, on a new connection, and the client gets the
        /// origin's answer.
        @Test func getOnAReusedConnectionThatClosesIsRetriedOnce() async throws {
            let origin = try Self.closingOnce("/b")
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                let warm = try await RawHTTP.request(port: proxy.port, "/a")
                #expect(warm.text == "ok")
                let retried = try await RawHTTP.request(port: proxy.port, "/b")
                #expect(retried.status == 200)
                #expect(retried.text == "ok")
                #expect(origin.requests.map { $0.prefix(7) } == ["GET /a ", "GET /b ", "GET /b "])
                #expect(origin.connections == 2)
            }
        }

        /// RFC 9110 §9.2.2: a non-idempotent request is never sent twice: the client gets a `502`.
        @Test func postOnAReusedConnectionThatClosesIsNotRetried() async throws {
            let origin = try Self.closingOnce("/p")
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                _ = try await RawHTTP.request(port: proxy.port, "/a")
                let failed = try await RawHTTP.request(port: proxy.port, method: "POST", "/p", body: Data("x".utf8))
                #expect(failed.status == 502)
                #expect(origin.requests.filter { $0.hasPrefix("POST /p ") }.count == 1)
            }
        }

        /// RFC 9112 §9.3.1: a new connection that closes before answering is the origin's answer, not
        /// a race with an idle close: the request is not sent again.
        @Test func getOnANewConnectionThatClosesIsNotRetried() async throws {
            let origin = try Self.closingOnce("/c")
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                let failed = try await RawHTTP.request(port: proxy.port, "/c")
                #expect(failed.status == 502)
                #expect(origin.requests.filter { $0.hasPrefix("GET /c ") }.count == 1)
            }
        }
    }
#endif
