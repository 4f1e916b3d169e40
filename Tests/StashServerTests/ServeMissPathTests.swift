#if Serve
    import Foundation
    import Testing

    /// The path of a miss: concurrent misses reach the origin together, each over a connection of
    /// its own (RFC 9112 §9.3: one outstanding request per connection without pipelining), and a
    /// body that arrives in pieces of every size is relayed and stored whole, and one that never
    /// comes is a `502`.
    @Suite(.serialized)
    struct ServeMissPathTests {
        /// Holds each request at an origin until `expected` of them have arrived.
        final class Rendezvous: Sendable {
            private let arrived = Locked(0)
            let expected: Int

            init(expected: Int) { self.expected = expected }

            /// Waits (for at most `seconds`) until `expected` requests arrived; `false` on time-out.
            func arriveAndWait(seconds: Double) -> Bool {
                arrived.withLock { $0 += 1 }
                let deadline = Date().addingTimeInterval(seconds)
                while Date() < deadline {
                    if arrived.withLock({ $0 >= expected }) { return true }
                    usleep(2_000)
                }
                return false
            }
        }

        /// Eight concurrent misses of different URLs are all sent to the origin before any is
        /// answered: the pool opens a connection for each (none waits for another's response),
        /// and each keeps it for its own request (RFC 9112 §9.3).
        @Test func concurrentMissesEachGetAnOriginConnection() async throws {
            let rendezvous = Rendezvous(expected: 8)
            let origin = try RawOrigin.start(keepAlive: true) { head, connection in
                let together = rendezvous.arriveAndWait(seconds: 10)
                let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
                let body = "\(target) \(together ? "together" : "alone")"
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                )
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            let raw = try await ServeOriginConnectionTests.get("/together/\(index)", port: proxy.port)
                            return try #require(RawHTTP.parse(raw).first).text
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(bodies) == Set((0..<8).map { "/together/\($0) together" }))
                #expect(origin.connections == 8)
            }
        }

        /// RFC 9112 §6.2: a body of 300,000 bytes that the origin sends in pieces from 1 byte to
        /// 70,000 bytes, with pauses between them, reaches the client byte for byte, and is stored
        /// whole: the next request is answered from the cache with the same bytes.
        @Test func aBodySentInPiecesOfEverySizeIsRelayedAndStoredWhole() async throws {
            var generator = SystemRandomNumberGenerator()
            let body = Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let pieces = [1, 17, 1_000, 4_095, 65_536, 70_000, 2, 30_000]
            let origin = try RawOrigin.start(keepAlive: true) { _, connection in
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: \(body.count)\r\n\r\n")
                var offset = 0
                var index = 0
                while offset < body.count {
                    let count = min(pieces[index % pieces.count], body.count - offset)
                    try connection.send(body.subdata(in: offset..<(offset + count)))
                    offset += count
                    index += 1
                    if index % 3 == 0 { usleep(1_000) }
                }
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                for attempt in ["miss", "hit"] {
                    let raw = try await ServeOriginConnectionTests.get("/pieces", port: proxy.port)
                    let response = try #require(RawHTTP.parse(raw).first, "\(attempt)")
                    #expect(response.status == 200, "\(attempt)")
                    #expect(response.body == body, "\(attempt)")
                }
                #expect(origin.requests.count == 1)
            }
        }

        /// RFC 9110 §15.6.3: an origin that closes before any of the body it announced is a bad gateway.
        ///
        /// The head of a miss waits for the first part of its body, so the client gets a `502`
        /// instead of a head whose body never comes; nothing is stored, and the next request goes
        /// to the origin again.
        @Test func anOriginThatClosesBeforeTheBodyIsABadGateway() async throws {
            let origin = try RawOrigin.start(keepAlive: true) { head, connection in
                if head.hasPrefix("GET /cut ") {
                    try connection.send("HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: 100\r\n\r\n")
                    throw RawHTTP.Failure(description: "closing before the body")
                }
                try connection.send("HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Length: 2\r\n\r\nok")
            }
            try await ServeInterimTests.withRawProxy(origin: origin) { proxy in
                for attempt in 1...2 {
                    let raw = try await ServeOriginConnectionTests.get("/cut", port: proxy.port)
                    #expect(try #require(RawHTTP.parse(raw).first, "\(attempt)").status == 502, "\(attempt)")
                }
                let raw = try await ServeOriginConnectionTests.get("/fine", port: proxy.port)
                #expect(try #require(RawHTTP.parse(raw).first).text == "ok")
                #expect(origin.requests.count == 3)
            }
        }
    }
#endif
