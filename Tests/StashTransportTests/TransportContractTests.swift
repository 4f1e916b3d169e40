#if AsyncHTTPClient
    import Foundation
    import Stash
    import Testing

    @testable import StashHTTP

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// What every ``HTTPTransport`` must do for the loader, checked with each transport against a
    /// real HTTP server on 127.0.0.1: bodies streamed to disk, redirects, content codings, request
    /// headers, cancellation, idle timeouts, and failures the retry policy can tell apart.
    @Suite(.timeLimit(.minutes(5)))
    struct TransportContractTests {
        private static let quickRetries = ResourceLoader.RetryPolicy(maximumRetries: 2, initialDelay: .zero)

        @Test(arguments: TransportKind.allCases)
        func largeBodyStreamsToTheCacheWithoutBeingHeldInMemory(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                let url = server.url("/big/3000000")
                let file = try await fixture.loader.fileURL(for: url)
                #expect(try TestBody.fileMatches(file, size: 3_000_000, seed: TestBody.seed(for: "/big/3000000")))
                // Only bodies under the 32 KiB inline threshold are ever buffered.
                #expect(fixture.loader.statistics.largestBufferedBody < 32 * 1024)
                #expect(fixture.loader.statistics.bytesReceived == 3_000_000)
                #expect(server.stats.value.requests == 1)
                #expect(fixture.downloads.isEmpty)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func responseHeadersAndASmallBodyArriveExactly(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                server.set(
                    "/small",
                    .init(
                        size: 1000, seed: 7, etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                        headers: ["Content-Type": "image/jpeg"]))
                #expect(try await fixture.loader.data(for: server.url("/small")) == TestBody.bytes(1000, seed: 7))
                let attributes = try #require(
                    try await fixture.cache.attributes(forKey: server.url("/small").absoluteString))
                #expect(attributes.metadata.etag == "\"v1\"")
                #expect(attributes.metadata.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
                #expect(attributes.size == 1000)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func chunkedBodyWithoutContentLengthIsStoredWhole(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                server.set("/chunked", .init(size: 200_000, seed: 3, chunked: true))
                #expect(try await fixture.loader.data(for: server.url("/chunked")) == TestBody.bytes(200_000, seed: 3))
                #expect(
                    try await fixture.cache.attributes(forKey: server.url("/chunked").absoluteString)?.size == 200_000)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func gzipEncodedBodyIsDecoded(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                server.set("/text", .init(headers: ["Content-Encoding": "gzip"], fixedBody: Self.gzipBody))
                // Content-Length (217) is the encoded length, not the body's.
                let data = try await fixture.loader.data(for: server.url("/text"))
                #expect(data == Data(String(repeating: "stash ", count: 20_000).utf8))
                #expect(try await fixture.cache.attributes(forKey: server.url("/text").absoluteString)?.size == 120_000)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func redirectIsFollowedAndCachedUnderTheRequestedURL(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                server.set("/old", .init(status: 301, headers: ["Location": server.url("/new/500").absoluteString]))
                let data = try await fixture.loader.data(for: server.url("/old"))
                #expect(data == TestBody.bytes(500, seed: TestBody.seed(for: "/new/500")))
                #expect(server.stats.value.order == ["/old", "/new/500"])
                let attributes = try await fixture.cache.attributes(forKey: server.url("/old").absoluteString)
                #expect(attributes?.metadata.extra[HTTPFreshness.urlKey] == server.url("/new/500").absoluteString)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func conditionalHeadersReachTheServerAndA304RefreshesTheEntry(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.cachePolicy = .http }) {
                server, fixture async throws in
                server.set("/photo", .init(size: 40_000, seed: 5, etag: "\"p1\"", cacheControl: "max-age=0"))
                let first = try await fixture.loader.data(for: server.url("/photo"))
                fixture.loader.memory.removeAll()
                #expect(try await fixture.loader.data(for: server.url("/photo")) == first)
                #expect(server.stats.value.conditionalRequests == 1)
                #expect(server.stats.value.notModified == 1)
                #expect(fixture.loader.statistics.notModified == 1)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func truncatedBodyFailsAsTransientAndIsRetried(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.retryPolicy = Self.quickRetries }) {
                server, fixture async throws in
                server.set("/t", .init(size: 100_000, seed: 2, truncateAfter: 1000))
                let failure = await error { try await fixture.loader.data(for: server.url("/t")) }
                #expect(failure?.code == .transport || failure?.code == .invalidResponse)
                #expect(failure?.message.contains("3 attempts") == true)
                #expect(server.stats.value.truncated == 3)
                #expect(fixture.loader.statistics.retries == 2)
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func serverErrorIsRetriedUntilItSucceeds(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.retryPolicy = Self.quickRetries }) {
                server, fixture async throws in
                server.set("/flaky", .init(size: 5000, seed: 4, failuresBeforeSuccess: 2, failureStatus: 503))
                #expect(try await fixture.loader.data(for: server.url("/flaky")) == TestBody.bytes(5000, seed: 4))
                #expect(server.stats.value.requests == 3)
                #expect(fixture.loader.statistics.retries == 2)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func notFoundIsNotRetried(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.retryPolicy = Self.quickRetries }) {
                server, fixture async throws in
                let failure = await error { try await fixture.loader.data(for: server.url("/missing")) }
                #expect(failure?.code == .notFound)
                #expect((failure?.cause as? HTTPStatusError)?.statusCode == 404)
                #expect(server.stats.value.requests == 1)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func refusedConnectionIsATransientTransportError(kind: TransportKind) async throws {
            try await withTemporaryDirectory { directory in
                let fixture = try TransportFixture(kind, directory: directory) {
                    $0.retryPolicy = ResourceLoader.RetryPolicy(maximumRetries: 1, initialDelay: .zero)
                }
                // A port that was just free: nothing listens there.
                let server = try await TestServer.start()
                let url = server.url("/gone/10")
                await server.stop()
                let failure = await error { try await fixture.loader.data(for: url) }
                #expect(failure?.code == .transport)
                #expect(failure?.message.contains(url.absoluteString) == true)
                #expect(failure?.message.contains("2 attempts") == true)
                #expect((failure?.cause as? URLError)?.code == .cannotConnectToHost)
                #expect(fixture.loader.statistics.retries == 1)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func stalledResponseTimesOutAndIsRetried(kind: TransportKind) async throws {
            let retryOnce = ResourceLoader.RetryPolicy(maximumRetries: 1, initialDelay: .zero)
            try await withTransportFixture(kind, configure: { $0.retryPolicy = retryOnce }) {
                server, fixture async throws in
                // The head arrives, the body never does (until the server stops).
                server.set("/stalled", .init(size: 50_000, seed: 1, gate: Gate()))
                var request = URLRequest(url: server.url("/stalled"))
                request.timeoutInterval = 1  // whole seconds: FoundationNetworking truncates a fraction to 0
                let failure = await error { try await fixture.loader.data(for: request) }
                #expect(failure?.code == .transport)
                #expect((failure?.cause as? URLError)?.code == .timedOut)
                #expect(server.stats.value.requests == 2)
                #expect(fixture.downloads.isEmpty)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func cancellingTheRequestStopsTheTransfer(kind: TransportKind) async throws {
            try await withTransportFixture(kind) { server, fixture async throws in
                let gate = Gate()
                // Chunked: with a Content-Length over the cache's size limit the loader would refuse the head.
                server.set("/held", .init(size: Self.bodyLargerThanSocketBuffers, seed: 1, gate: gate, chunked: true))
                let task = Task { try await fixture.loader.data(for: server.url("/held")) }
                try await server.stats.wait { $0.requests == 1 }
                task.cancel()
                #expect(await error { try await task.value }?.code == .cancelled)
                try await fixture.events.wait(for: 1) { $0.outcome == .cancelled }
                // Once the body flows, the server finds the client gone; nothing was kept.
                //
                // A transport reports the cancellation before its connection is closed (async-http-client
                // closes it on its event loop, URLSession on its own queue), so the gate may open first.
                // The server's writes then go into the loopback socket buffers; a body that fits in them
                // is written in full and the server counts it completed, although the client never read
                // it. The body is larger than the kernel lets those buffers grow, so the server can only
                // finish it by finding the connection closed.
                gate.open()
                try await server.stats.wait { $0.aborted == 1 }
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }

        /// More bytes than the send and receive buffers of a loopback connection can hold together,
        /// twice over (the kernel's limits count its own overhead too), plus 2 MB.
        ///
        /// On Linux the limits are the largest sizes TCP autotuning may reach (`tcp_wmem`, `tcp_rmem`);
        /// elsewhere 16 MB stands in for them.
        private static let bodyLargerThanSocketBuffers: Int = {
            func largest(_ name: String) -> Int? {
                #if os(Linux)
                    guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/\(name)", encoding: .utf8) else {
                        return nil
                    }
                    return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }
                #else
                    return nil
                #endif
            }
            let buffers = (largest("tcp_wmem") ?? 8_000_000) + (largest("tcp_rmem") ?? 8_000_000)
            return 2 * buffers + 2_000_000
        }()

        @Test(arguments: TransportKind.allCases)
        func bodyOverTheMaximumSizeIsRefusedWhileItStreams(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.maximumResponseSize = .bytes(100_000) }) {
                server, fixture async throws in
                server.set("/big", .init(size: 3_000_000, seed: 1, chunked: true))
                let failure = await error { try await fixture.loader.data(for: server.url("/big")) }
                #expect(failure?.code == .tooLarge)
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func concurrentTransfersEachGetTheirOwnBody(kind: TransportKind) async throws {
            try await withTransportFixture(kind, configure: { $0.maximumConcurrentTransfers = 4 }) {
                server, fixture async throws in
                let sizes = [10, 1_000, 33_000, 70_000, 150_000, 400_000, 5, 64 * 1024, 64 * 1024 + 1, 250_000]
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    for (index, size) in sizes.enumerated() {
                        group.addTask {
                            let path = "/many/\(index)/\(size)"
                            let data = try await fixture.loader.data(for: server.url(path))
                            return data == TestBody.bytes(size, seed: TestBody.seed(for: path))
                        }
                    }
                    for try await matches in group { #expect(matches) }
                }
                #expect(server.stats.value.requests == sizes.count)
                #expect(server.stats.value.maxInFlight <= 4)
                #expect(try fixture.cache.totalCount == sizes.count)
            }
        }

        /// `"stash " × 20,000` (120,000 bytes), gzip-compressed to 217 bytes.
        private static let gzipBody = Data(
            hex:
                "1f8b0800000000000203edc4311100000804a02a5673737ffb9f096c0003d9ce546cdbb66ddbb66ddbb66ddbb66ddbb6"
                + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
                + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
                + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
                + "6ddbb66ddbb66ddbb66ddbb66ddbb6fd7ca6ca5127c0d40100")
    }

    extension Data {
        fileprivate init(hex: String) {
            var bytes: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                bytes.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            self.init(bytes)
        }
    }
#endif
