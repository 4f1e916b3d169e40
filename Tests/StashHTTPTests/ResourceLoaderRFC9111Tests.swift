import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// RFC 9111 through a ``ResourceLoader`` of each kind under ``ResourceLoader/CachePolicy/http``,
/// in front of a real origin on 127.0.0.1: what is stored, reused, revalidated and invalidated.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderRFC9111Tests {
    static let kinds: [HTTPCacheKind] = [.private, .shared]

    private func fixture(_ directory: URL, kind: HTTPCacheKind, clock: TestClock) throws -> Fixture {
        try Fixture(directory: directory) { configuration in
            configuration.cachePolicy = .http
            configuration.cacheKind = kind
            configuration.clock = clock.function
        }
    }

    private func request(_ url: URL, _ headers: [String: String] = [:], method: String = "GET") -> ResourceRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return ResourceRequest(request)
    }

    /// Loads `path` twice (the second time `after` seconds later) and returns the second
    /// response and the number of requests the origin saw.
    private func twice(
        _ resource: TestServer.Resource, kind: HTTPCacheKind, after seconds: Double = 1,
        second headers: [String: String] = [:]
    ) async throws -> (ResourceResponse, Int) {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try fixture(directory, kind: kind, clock: clock)
                server.set("/r", resource)
                _ = try await fixture.loader.data(for: server.url("/r"))
                clock.advance(by: seconds)
                let response = try await fixture.loader.response(for: request(server.url("/r"), headers))
                return (response, server.stats.value.requests)
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_2_10_sMaxAgeIsForSharedCachesOnly(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=5, s-maxage=600"), kind: kind, after: 60)
        #expect(requests == (kind == .shared ? 1 : 2))
        #expect(response.source == (kind == .shared ? .memory : .network))
    }

    /// A response without freshness for the loader's kind (`s-maxage` counts only for a shared
    /// cache, §5.2.2.10) is never fresh (§4.2), not even in the millisecond it arrived.
    ///
    /// The recorded response time, rounded to the millisecond, may be a little after the clock
    /// that reads it: here, the same instant.
    @Test(arguments: kinds)
    func rfc9111Section4_2_aResponseWithoutFreshnessIsNeverFreshEvenAsItArrives(kind: HTTPCacheKind) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                clock.advance(by: 0.0006)  // recorded as .001: rounded up, past the clock
                let fixture = try fixture(directory, kind: kind, clock: clock)
                server.set("/r", .init(size: 100, seed: 1, cacheControl: "s-maxage=600"))
                _ = try await fixture.loader.data(for: server.url("/r"))
                fixture.loader.memory.removeAll()  // the disk's copy answers, as in the flaky case
                let response = try await fixture.loader.response(for: request(server.url("/r")))
                #expect(server.stats.value.requests == (kind == .shared ? 1 : 2))
                #expect(response.source == (kind == .shared ? .disk : .network))
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_2_8_proxyRevalidateForbidsStaleServesInASharedCache(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=1, proxy-revalidate"), kind: kind, after: 10,
            second: ["Cache-Control": "max-stale=60"])
        #expect(requests == (kind == .shared ? 2 : 1))
        #expect(response.source == (kind == .shared ? .network : .stale))
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_1_requestNoCacheRevalidatesAFreshResponse(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, etag: "\"a\"", cacheControl: "max-age=600"), kind: kind,
            second: ["Cache-Control": "no-cache"])
        #expect(requests == 2)
        #expect(response.source == .revalidated)
    }

    @Test(arguments: kinds)
    func rfc9111Section5_4_pragmaNoCacheCountsWithoutCacheControl(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, etag: "\"a\"", cacheControl: "max-age=600"), kind: kind,
            second: ["Pragma": "no-cache"])
        #expect(requests == 2 && response.source == .revalidated)
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_1_1_requestMaxAgeRefusesAnOlderResponse(kind: HTTPCacheKind) async throws {
        let (old, refetched) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=600"), kind: kind, after: 60,
            second: ["Cache-Control": "max-age=30"])
        #expect(refetched == 2 && old.source == .network)
        let (young, reused) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=600"), kind: kind, after: 10,
            second: ["Cache-Control": "max-age=30"])
        #expect(reused == 1 && young.source == .memory)
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_1_3_requestMinFreshNeedsThatMuchFreshnessLeft(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=600"), kind: kind, after: 100,
            second: ["Cache-Control": "min-fresh=550"])
        #expect(requests == 2 && response.source == .network)
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_1_2_requestMaxStaleAcceptsAStaleResponse(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=10"), kind: kind, after: 100,
            second: ["Cache-Control": "max-stale=1000"])
        #expect(requests == 1 && response.source == .stale)
        #expect(response.age == .seconds(100))
    }

    @Test(arguments: kinds)
    func rfc9111Section5_2_1_7_onlyIfCachedFailsWithoutARequestWhenNothingMayAnswer(kind: HTTPCacheKind)
        async throws
    {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try fixture(directory, kind: kind, clock: TestClock())
                server.set("/r", .init(size: 100, seed: 1, cacheControl: "max-age=600"))
                let miss = await error {
                    try await fixture.loader.data(for: request(server.url("/r"), ["Cache-Control": "only-if-cached"]))
                }
                #expect(miss?.code == .notFound)
                #expect(miss?.message.contains("only-if-cached") == true)
                #expect(server.stats.value.requests == 0)
                _ = try await fixture.loader.data(for: server.url("/r"))
                let hit = try await fixture.loader.response(
                    for: request(server.url("/r"), ["Cache-Control": "only-if-cached"]))
                #expect(hit.source == .disk || hit.source == .memory)
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section4_2_3_responsesFromTheCacheCarryTheirAge(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, cacheControl: "max-age=600", headers: ["Age": "100"]), kind: kind, after: 30)
        #expect(requests == 1)
        #expect(response.age == .seconds(130))
    }

    @Test(arguments: kinds)
    func rfc9111Section5_3_expiresInTheRFC850FormatGivesFreshness(kind: HTTPCacheKind) async throws {
        // The test clock is Fri, 15 Jan 2027 08:00:00 GMT.
        let resource = TestServer.Resource(
            size: 100, seed: 1, expires: "Friday, 15-Jan-27 09:00:00 GMT",
            headers: ["Date": "Fri, 15 Jan 2027 08:00:00 GMT"])
        let (fresh, reused) = try await twice(resource, kind: kind, after: 3500)
        #expect(reused == 1 && fresh.source == .memory)
        let (stale, refetched) = try await twice(resource, kind: kind, after: 3700)
        #expect(refetched == 2 && stale.source == .network)
    }

    @Test(arguments: kinds)
    func rfc9111Section5_3_anInvalidExpiresIsAlreadyExpired(kind: HTTPCacheKind) async throws {
        let (response, requests) = try await twice(
            .init(size: 100, seed: 1, expires: "0", headers: ["Date": "Fri, 15 Jan 2027 08:00:00 GMT"]), kind: kind)
        #expect(requests == 2 && response.source == .network)
    }

    @Test(arguments: kinds)
    func rfc9111Section4_3_4_a304UpdatesTheStoredHeaders(kind: HTTPCacheKind) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try fixture(directory, kind: kind, clock: clock)
                server.set(
                    "/r", .init(size: 100, seed: 1, etag: "\"1\"", cacheControl: "max-age=1", headers: ["Age": "0"]))
                _ = try await fixture.loader.data(for: server.url("/r"))
                clock.advance(by: 10)
                server.set("/r", .init(size: 100, seed: 1, etag: "\"1\"", cacheControl: "max-age=3600"))
                let revalidated = try await fixture.loader.response(for: request(server.url("/r")))
                #expect(revalidated.source == .revalidated)
                #expect(revalidated.metadata.extra[HTTPFreshness.cacheControlKey] == "max-age=3600")
                clock.advance(by: 1000)
                let reused = try await fixture.loader.response(for: request(server.url("/r")))
                #expect(reused.source == .disk || reused.source == .memory)
                #expect(reused.age == .seconds(1000))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section4_headIsAnsweredFromAStoredGet(kind: HTTPCacheKind) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try fixture(directory, kind: kind, clock: TestClock())
                server.set("/r", .init(size: 100, seed: 1, etag: "\"1\"", cacheControl: "max-age=600"))
                server.set("/unstored", .init(size: 100, seed: 1))
                let head = try await fixture.loader.response(for: request(server.url("/unstored"), method: "HEAD"))
                #expect(head.data == Data())
                #expect(server.stats.value.requests == 1)
                _ = try await fixture.loader.data(for: server.url("/r"))
                let stored = try await fixture.loader.response(for: request(server.url("/r"), method: "HEAD"))
                #expect(stored.data == Data())
                #expect(stored.metadata.etag == "\"1\"")
                #expect(server.stats.value.requests == 2)
                // HEAD stored nothing, and a GET still gets the whole body.
                #expect(try await fixture.loader.data(for: server.url("/r")) == TestBody.bytes(100, seed: 1))
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section4_4_unsafeMethodsInvalidateTheTargetAndItsSameOriginLocation(kind: HTTPCacheKind)
        async throws
    {
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let fixture = try fixture(directory, kind: kind, clock: TestClock())
                    server.set("/a", .init(size: 100, seed: 1, cacheControl: "max-age=600"))
                    server.set("/b", .init(size: 100, seed: 2, cacheControl: "max-age=600"))
                    server.set(
                        "/form",
                        .init(
                            size: 10, seed: 3,
                            headers: ["Location": server.url("/a").path, "Content-Location": "http://other.example/b"]))
                    _ = try await fixture.loader.data(for: server.url("/a"))
                    _ = try await fixture.loader.data(for: server.url("/b"))
                    _ = try await fixture.loader.data(for: server.url("/form"))
                    let answer = try await fixture.loader.response(for: request(server.url("/form"), method: method))
                    #expect(answer.data == TestBody.bytes(10, seed: 3))
                    #expect(server.stats.value.requests == 4)
                    // /form and /a (its Location) are gone; /b (another origin's URL) stays.
                    _ = try await fixture.loader.data(for: server.url("/form"))
                    _ = try await fixture.loader.data(for: server.url("/a"))
                    _ = try await fixture.loader.data(for: server.url("/b"))
                    #expect(server.stats.value.requestsByPath["/a"] == 2, "\(method)")
                    #expect(server.stats.value.requestsByPath["/b"] == 1, "\(method)")
                    #expect(server.stats.value.requestsByPath["/form"] == 3, "\(method)")
                    #expect(fixture.loader.statistics.invalidations == 2)
                }
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section4_4_aFailedUnsafeRequestInvalidatesNothing(kind: HTTPCacheKind) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try fixture(directory, kind: kind, clock: TestClock())
                server.set("/a", .init(size: 100, seed: 1, cacheControl: "max-age=600"))
                _ = try await fixture.loader.data(for: server.url("/a"))
                server.set("/a", .init(status: 500, size: 10, seed: 1))
                let failure = await error {
                    try await fixture.loader.data(for: request(server.url("/a"), method: "POST"))
                }
                #expect(failure?.code == .invalidResponse)
                #expect(failure?.message.hasPrefix("POST ") == true)
                #expect(try await fixture.loader.data(for: server.url("/a")) == TestBody.bytes(100, seed: 1))
                #expect(server.stats.value.requests == 2)
                let noFile = await error {
                    try await fixture.loader.fileURL(for: request(server.url("/a"), method: "POST"))
                }
                #expect(noFile?.code == .invalidArgument)
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section3_statusesWithoutExplicitFreshnessAreStoredOnlyWhenHeuristicallyCacheable(
        kind: HTTPCacheKind
    ) async throws {
        let modified = ["Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT", "Date": "Fri, 15 Jan 2027 08:00:00 GMT"]
        let (ok, reused) = try await twice(.init(size: 100, seed: 1, headers: modified), kind: kind, after: 60)
        #expect(reused == 1 && ok.source == .memory)
        let (created, refetched) = try await twice(
            .init(status: 201, size: 100, seed: 1, headers: modified), kind: kind, after: 60)
        #expect(refetched == 2 && created.source == .network)
    }

    @Test(arguments: kinds)
    func rfc9111Section3_a404WithExplicitFreshnessIsStoredAndAnsweredWithoutTheNetwork(kind: HTTPCacheKind)
        async throws
    {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try fixture(directory, kind: kind, clock: clock)
                server.set("/gone", .init(status: 404, size: 10, seed: 1, cacheControl: "max-age=60"))
                let url = server.url("/gone")
                for _ in 0..<3 {
                    let failure = await error { try await fixture.loader.data(for: url) }
                    #expect(failure?.code == .notFound)
                    #expect((failure?.cause as? HTTPStatusError)?.statusCode == 404)
                }
                #expect(server.stats.value.requests == 1)
                // A file delivery gets the same stored answer.
                #expect(await error { try await fixture.loader.fileURL(for: url) }?.code == .notFound)
                #expect(server.stats.value.requests == 1)
                clock.advance(by: 61)
                server.set("/gone", .init(size: 10, seed: 5, cacheControl: "max-age=60"))
                #expect(try await fixture.loader.data(for: url) == TestBody.bytes(10, seed: 5))
                #expect(server.stats.value.requests == 2)
                // Without freshness information (and no Last-Modified) a 404 is not stored.
                server.set("/missing", .init(status: 404, size: 10, seed: 1))
                _ = await error { try await fixture.loader.data(for: server.url("/missing")) }
                _ = await error { try await fixture.loader.data(for: server.url("/missing")) }
                #expect(server.stats.value.requestsByPath["/missing"] == 2)
                // Nor is a status that a cache does not store without explicit freshness (403).
                server.set(
                    "/forbidden", .init(status: 403, size: 10, seed: 1, lastModified: "Thu, 01 Jan 2026 00:00:00 GMT"))
                _ = await error { try await fixture.loader.data(for: server.url("/forbidden")) }
                _ = await error { try await fixture.loader.data(for: server.url("/forbidden")) }
                #expect(server.stats.value.requestsByPath["/forbidden"] == 2)
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section4_2_4_whenTheOriginFailsOnlyAPrivateLoaderServesANoCacheResponseStale(kind: HTTPCacheKind)
        async throws
    {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try fixture(directory, kind: kind, clock: clock)
                server.set("/r", .init(size: 100, seed: 1, cacheControl: "no-cache"))
                server.set("/p", .init(size: 100, seed: 2, cacheControl: "max-age=1, proxy-revalidate"))
                _ = try await fixture.loader.data(for: server.url("/r"))
                _ = try await fixture.loader.data(for: server.url("/p"))
                clock.advance(by: 10)
                server.set("/r", .init(status: 503, size: 10, seed: 1))
                server.set("/p", .init(status: 503, size: 10, seed: 1))
                for path in ["/r", "/p"] {
                    if kind == .private {
                        // An app's offline copy (ResourceLoader.Configuration.maximumStaleness).
                        let response = try await fixture.loader.response(for: request(server.url(path)))
                        #expect(response.source == .stale, "\(path)")
                    } else {
                        let failure = await error { try await fixture.loader.data(for: server.url(path)) }
                        #expect(failure?.code == .invalidResponse, "\(path)")
                    }
                }
            }
        }
    }

    @Test(arguments: kinds)
    func rfc9111Section3_3_aBodyShorterThanItsContentLengthIsNeverStored(kind: HTTPCacheKind) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try fixture(directory, kind: kind, clock: TestClock())
                server.set("/cut", .init(size: 100_000, seed: 1, cacheControl: "max-age=600", truncateAfter: 50_000))
                let failure = await error { try await fixture.loader.data(for: server.url("/cut")) }
                #expect(failure != nil)
                #expect(try await fixture.cache.containsData(forKey: server.url("/cut").absoluteString) == false)
            }
        }
    }
}
