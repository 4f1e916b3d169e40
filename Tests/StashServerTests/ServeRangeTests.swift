#if Serve
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Ranges served from stored responses (RFC 9110 §14, RFC 9111 §3.4).
    @Suite(.serialized)
    struct ServeRangeTests {
        static let digits = Data("0123456789A".utf8)

        /// RFC 9110 §14.1.2 and §15.3.7: a stored complete response answers a byte range, an open range
        /// and a suffix range with `206` and `Content-Range`, without asking the origin.
        @Test func storedResponseAnswersSingleRanges() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/r", Origin.Reply(headers: [("Cache-Control", "max-age=600"), ("A", "1")], body: Self.digits))
                _ = try await RawHTTP.request(port: proxy.port, "/r")
                for (range, text, contentRange) in [
                    ("bytes=0-1", "01", "bytes 0-1/11"), ("bytes=1-", "123456789A", "bytes 1-10/11"),
                    ("bytes=-1", "A", "bytes 10-10/11"), ("bytes=9-99", "9A", "bytes 9-10/11"),
                ] {
                    let response = try await RawHTTP.request(port: proxy.port, "/r", headers: [("Range", range)])
                    #expect(response.status == 206, "\(range)")
                    #expect(response.text == text, "\(range)")
                    #expect(response.header("content-range") == contentRange)
                    #expect(response.header("content-length") == String(text.utf8.count))
                    #expect(response.header("a") == "1")  // RFC 9111 §3.4: the stored fields
                    #expect(response.header("age") != nil)
                }
                #expect(origin.count("/r") == 1)
            }
        }

        /// RFC 9110 §14.6: several ranges are sent as `multipart/byteranges`, each part with its own
        /// `Content-Range`.
        @Test func severalRangesAreMultipart() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/m",
                    Origin.Reply(
                        headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")], body: Self.digits))
                _ = try await RawHTTP.request(port: proxy.port, "/m")
                let response = try await RawHTTP.request(port: proxy.port, "/m", headers: [("Range", "bytes=0-1,5-6")])
                #expect(response.status == 206)
                let type = try #require(response.header("content-type"))
                #expect(type.hasPrefix("multipart/byteranges; boundary="))
                let boundary = String(type.split(separator: "=").last ?? "")
                let expected =
                    "\r\n--\(boundary)\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/11\r\n\r\n01"
                    + "\r\n--\(boundary)\r\nContent-Type: text/plain\r\nContent-Range: bytes 5-6/11\r\n\r\n56"
                    + "\r\n--\(boundary)--\r\n"
                #expect(response.text == expected)
                #expect(response.header("content-length") == String(expected.utf8.count))
                #expect(origin.count("/m") == 1)
            }
        }

        /// RFC 9110 §15.5.17: no satisfiable range gets `416` with `Content-Range: bytes */LENGTH`;
        /// §14.2: a `Range` that does not parse is ignored (`200`).
        @Test func unsatisfiableRangeIs416AndInvalidRangeIsIgnored() async throws {
            try await withProxy { origin, proxy in
                origin.set("/u", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Self.digits))
                _ = try await RawHTTP.request(port: proxy.port, "/u")
                let beyond = try await RawHTTP.request(port: proxy.port, "/u", headers: [("Range", "bytes=50-60")])
                #expect(beyond.status == 416)
                #expect(beyond.header("content-range") == "bytes */11")
                let invalid = try await RawHTTP.request(port: proxy.port, "/u", headers: [("Range", "bytes=5-1")])
                #expect(invalid.status == 200)
                #expect(invalid.body == Self.digits)
                #expect(origin.count("/u") == 1)
            }
        }

        /// RFC 9110 §13.1.5: `If-Range` with the stored strong entity-tag gets the range; with another
        /// one, the whole response.
        @Test func ifRangeSelectsRangeOrWholeResponse() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/i",
                    Origin.Reply(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")], body: Self.digits))
                _ = try await RawHTTP.request(port: proxy.port, "/i")
                let same = try await RawHTTP.request(
                    port: proxy.port, "/i", headers: [("Range", "bytes=0-2"), ("If-Range", "\"v1\"")])
                #expect(same.status == 206)
                #expect(same.text == "012")
                let other = try await RawHTTP.request(
                    port: proxy.port, "/i", headers: [("Range", "bytes=0-2"), ("If-Range", "\"v0\"")])
                #expect(other.status == 200)
                #expect(other.body == Self.digits)
                #expect(origin.count("/i") == 1)
            }
        }

        /// RFC 9111 §3.4: a `Range` miss fetches the whole response once (without `Range`), stores it
        /// and answers the range from it; the next ranges are hits.
        @Test func rangeMissFetchesTheWholeResponseOnce() async throws {
            try await withProxy { origin, proxy in
                origin.set("/w", Origin.Reply(headers: [("Cache-Control", "max-age=600")], body: Self.digits))
                let first = try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=2-4")])
                #expect(first.status == 206)
                #expect(first.text == "234")
                let second = try await RawHTTP.request(port: proxy.port, "/w", headers: [("Range", "bytes=-2")])
                #expect(second.status == 206)
                #expect(second.text == "9A")
                #expect(origin.count("/w") == 1)
                #expect(origin.requests("/w").first?.header("range") == nil)
            }
        }

        /// RFC 9111 §3.4: a `Range` miss is answered as its range's bytes come from the origin.
        ///
        /// Not when the whole body has come: the origin sends the first 64 KiB of 1 MiB and holds
        /// the rest until the client has its answer. The whole response is still stored: the next
        /// ranges, past the first stage, are hits.
        @Test(arguments: ["bytes=0-99", "bytes=10-19,65000-65009"])
        func rangeMissIsAnsweredAsItsBytesArrive(range: String) async throws {
            let staged = try StagedOrigin()
            defer { staged.stop() }
            let (body, size) = (staged.body, StagedOrigin.size)
            let proxy = try await ServeProcess.start(["--origin", staged.raw.url])
            do {
                let answer = try await RawHTTP.request(port: proxy.port, "/staged", headers: [("Range", range)])
                let sentWhenAnswered = staged.sent.withLock { $0 }
                staged.releaseRest()
                #expect(sentWhenAnswered == 1)
                #expect(answer.status == 206)
                if range == "bytes=0-99" {
                    #expect(answer.body == body.prefix(100))
                    #expect(answer.header("content-range") == "bytes 0-99/\(size)")
                } else {
                    #expect(answer.header("content-type")?.hasPrefix("multipart/byteranges; boundary=") == true)
                    #expect(answer.body.range(of: body[10...19]) != nil)
                    #expect(answer.body.range(of: body[65_000...65_009]) != nil)
                    #expect(answer.header("content-length") == String(answer.body.count))
                }
                for (later, slice) in [
                    ("bytes=1000000-1000099", 1_000_000...1_000_099), ("bytes=-5", (size - 5)...(size - 1)),
                ] {
                    let hit = try await RawHTTP.request(port: proxy.port, "/staged", headers: [("Range", later)])
                    #expect(hit.status == 206, "\(later)")
                    #expect(hit.body == body[slice], "\(later)")
                }
                #expect(staged.raw.requests.count == 1)
                #expect(staged.raw.requests.first?.lowercased().contains("range:") == false)
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        }

        /// RFC 9111 §3.4: the whole response a range miss fetches is stored even when the client
        /// that asked leaves before its range is sent: the client resets its connection once it has
        /// the head, the origin then sends the rest, and the next range is a hit.
        @Test func rangeMissIsStoredWhenItsClientLeaves() async throws {
            let staged = try StagedOrigin()
            defer { staged.stop() }
            let proxy = try await ServeProcess.start(["--origin", staged.raw.url])
            do {
                let head = try await RawHTTP.onThread { () -> String in
                    let socket = try RawHTTP.connect(port: proxy.port, timeout: 10)
                    try RawHTTP.write(
                        socket, Data("GET /left HTTP/1.1\r\nHost: a\r\nRange: bytes=0-199999\r\n\r\n".utf8))
                    var head = Data()
                    var byte: UInt8 = 0
                    while !head.suffix(4).elementsEqual("\r\n\r\n".utf8), recv(socket, &byte, 1, 0) == 1 {
                        head.append(byte)
                    }
                    var reset = linger(l_onoff: 1, l_linger: 0)  // close with RST, unread bytes and all
                    setsockopt(socket, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                    close(socket)
                    return String(decoding: head, as: UTF8.self)
                }
                #expect(head.hasPrefix("HTTP/1.1 206"))
                staged.releaseRest()
                let hit = try await RawHTTP.request(
                    port: proxy.port, "/left", headers: [("Range", "bytes=500000-500009")])
                #expect(hit.status == 206)
                #expect(hit.body == staged.body[500_000...500_009])
                #expect(staged.raw.requests.count == 1)
            } catch {
                await proxy.stop()
                throw error
            }
            await proxy.stop()
        }

        /// RFC 9110 §13.2.2: on a range miss the client's own `If-None-Match` comes before its `Range`.
        ///
        /// A match gets `304`; an `If-Range` that does not match gets the whole `200` (§13.1.5). The
        /// fetched response is stored either way.
        @Test func rangeMissEvaluatesPreconditionsBeforeTheRange() async throws {
            try await withProxy { origin, proxy in
                for path in ["/p304", "/p200"] {
                    origin.set(
                        path,
                        Origin.Reply(
                            headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")], body: Self.digits))
                }
                let notModified = try await RawHTTP.request(
                    port: proxy.port, "/p304", headers: [("Range", "bytes=0-1"), ("If-None-Match", "\"v1\"")])
                #expect(notModified.status == 304)
                #expect(notModified.body.isEmpty)
                let whole = try await RawHTTP.request(
                    port: proxy.port, "/p200", headers: [("Range", "bytes=0-1"), ("If-Range", "\"v0\"")])
                #expect(whole.status == 200)
                #expect(whole.body == Self.digits)
                #expect(whole.header("content-length") == "11")
                for path in ["/p304", "/p200"] {
                    let hit = try await RawHTTP.request(port: proxy.port, path, headers: [("Range", "bytes=2-3")])
                    #expect(hit.status == 206, "\(path)")
                    #expect(hit.text == "23", "\(path)")
                    #expect(origin.count(path) == 1)
                }
            }
        }

        /// `--range-fetch-limit`: a response longer than the limit is not fetched whole; the client's
        /// range goes to the origin.
        @Test func rangeAboveTheFetchLimitIsPassedThrough() async throws {
            try await withProxy(["--range-fetch-limit", "1KiB"]) { origin, proxy in
                origin.set("/big", Origin.Reply(headers: [("Cache-Control", "max-age=600")], streamedSize: 8192))
                _ = try await RawHTTP.request(port: proxy.port, "/big", headers: [("Range", "bytes=0-9")])
                #expect(origin.requests("/big").last?.header("range") == "bytes=0-9")
            }
        }

        /// A body stored in a disk-tier file answers 100 random ranges with 0 origin requests, each
        /// range cut from the file (RFC 9111 §3.4).
        @Test func diskTierBodyAnswersRandomRangesWithoutTheOrigin() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-range-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await withProxy(["--dir", directory.path, "--memory-limit", "1MiB"]) { origin, proxy in
                let size = 4 * 1_048_576
                origin.set("/seek", Origin.Reply(headers: [("Cache-Control", "max-age=600")], streamedSize: size))
                let whole = try await RawHTTP.request(port: proxy.port, "/seek")
                #expect(whole.body.count == size)
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<100 {
                    let start = Int.random(in: 0..<size, using: &generator)
                    let end = min(size - 1, start + Int.random(in: 0..<100_000, using: &generator))
                    let response = try await RawHTTP.request(
                        port: proxy.port, "/seek", headers: [("Range", "bytes=\(start)-\(end)")])
                    #expect(response.status == 206)
                    #expect(response.body == whole.body[start...end])
                }
                #expect(origin.count("/seek") == 1)
            }
        }
    }

    /// An origin that sends a 1 MiB body in two stages: the first 64 KiB at once, the rest once the
    /// test releases it, and says how far it got.
    final class StagedOrigin: Sendable {
        static let size = 1_048_576
        static let stage = 65_536
        let body = Data((0..<StagedOrigin.size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
        let raw: RawOrigin
        /// The origin's own account: 1 once the first stage is sent, 2 once the whole body is.
        let sent = Locked(0)
        private let release = DispatchSemaphore(value: 0)

        init() throws {
            let (body, sent, release) = (body, sent, release)
            raw = try RawOrigin.start { _, connection in
                try connection.send(
                    "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nContent-Type: application/octet-stream\r\n"
                        + "Content-Length: \(StagedOrigin.size)\r\nConnection: close\r\n\r\n")
                try connection.send(body.prefix(StagedOrigin.stage))
                sent.withLock { $0 = 1 }
                _ = release.wait(timeout: .now() + 60)
                try connection.send(body.dropFirst(StagedOrigin.stage))
                sent.withLock { $0 = 2 }
            }
        }

        /// Lets the origin send the rest of the body.
        func releaseRest() { release.signal() }

        func stop() {
            release.signal()
            raw.stop()
        }
    }
#endif
