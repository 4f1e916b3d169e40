import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Serving stale entries under `.http`: when the origin fails (stale-if-error), and at once
/// while one background request revalidates (stale-while-revalidate).
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderStaleTests {
    private func makeFixture(
        _ directory: URL, clock: TestClock, maximumStaleness: Duration? = .seconds(60)
    ) throws -> Fixture {
        try Fixture(directory: directory) { configuration in
            configuration.cachePolicy = .http
            configuration.clock = clock.function
            configuration.maximumStaleness = maximumStaleness
        }
    }

    @Test func stoppedOriginGetsTheStaleEntryWithinMaximumStalenessAndAnErrorBeyondIt() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let fixture = try makeFixture(directory, clock: clock)
            let server = try await TestServer.start()
            server.set("/photo", .init(size: 50_000, seed: 7, etag: "\"p1\"", cacheControl: "max-age=1"))
            let url = server.url("/photo")
            _ = try await fixture.loader.data(for: url)
            await server.stop()

            clock.advance(by: 1 + 60)
            let stale = try await fixture.loader.response(for: ResourceRequest(url))
            #expect(stale.source == .stale)
            #expect(stale.data == TestBody.bytes(50_000, seed: 7))
            #expect(stale.originFailure?.code == .transport)
            #expect(stale.originFailure?.message.contains(url.absoluteString) == true)
            #expect(fixture.loader.statistics.staleServes == 1)
            #expect(fixture.events.count { $0.outcome == .servedStale(.transport) } == 1)

            clock.advance(by: 1)
            let refused = await error { try await fixture.loader.data(for: url) }
            #expect(refused?.code == .transport)
            #expect(fixture.loader.statistics.staleServes == 1)
        }
    }

    @Test func mustRevalidateAndNoCacheWithMustRevalidateAreNeverServedStale() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let fixture = try makeFixture(directory, clock: clock)
            let server = try await TestServer.start()
            server.set("/a", .init(size: 100, seed: 1, etag: "\"a\"", cacheControl: "max-age=1, must-revalidate"))
            server.set("/b", .init(size: 100, seed: 2, etag: "\"b\"", cacheControl: "no-cache, must-revalidate"))
            _ = try await fixture.loader.data(for: server.url("/a"))
            _ = try await fixture.loader.data(for: server.url("/b"))
            await server.stop()
            clock.advance(by: 5)
            #expect(await error { try await fixture.loader.data(for: server.url("/a")) }?.code == .transport)
            #expect(await error { try await fixture.loader.data(for: server.url("/b")) }?.code == .transport)
            #expect(fixture.loader.statistics.staleServes == 0)
        }
    }

    @Test(arguments: [500, 503])
    func serverErrorGetsTheStaleEntryUnlessItMustRevalidate(status: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set("/ok", .init(size: 2_000, seed: 3, etag: "\"o\"", cacheControl: "max-age=10"))
                server.set("/strict", .init(size: 2_000, seed: 4, cacheControl: "max-age=10, must-revalidate"))
                _ = try await fixture.loader.data(for: server.url("/ok"))
                _ = try await fixture.loader.data(for: server.url("/strict"))
                server.set("/ok", .init(status: status))
                server.set("/strict", .init(status: status))
                clock.advance(by: 30)

                let stale = try await fixture.loader.response(for: ResourceRequest(server.url("/ok")))
                #expect(stale.source == .stale)
                #expect(stale.data == TestBody.bytes(2_000, seed: 3))
                #expect(stale.originFailure?.code == .invalidResponse)
                #expect((stale.originFailure?.cause as? HTTPStatusError)?.statusCode == status)

                let refused = await error { try await fixture.loader.data(for: server.url("/strict")) }
                #expect(refused?.code == .invalidResponse)
                #expect((refused?.cause as? HTTPStatusError)?.statusCode == status)
                #expect(fixture.loader.statistics.staleServes == 1)
                #expect(server.stats.value.requests == 4)
            }
        }
    }

    @Test func staleIfErrorLengthensTheWindowAndNilMaximumStalenessRefusesEveryStaleServe() async throws {
        try await withTemporaryDirectory { directory in
            let clock = TestClock()
            let fixture = try makeFixture(directory, clock: clock, maximumStaleness: .seconds(10))
            let strict = try Fixture(directory: directory.appendingPathComponent("strict")) { configuration in
                configuration.cachePolicy = .http
                configuration.clock = clock.function
                configuration.maximumStaleness = nil
            }
            let server = try await TestServer.start()
            server.set("/s", .init(size: 300, seed: 5, etag: "\"s\"", cacheControl: "max-age=1, stale-if-error=300"))
            let url = server.url("/s")
            _ = try await fixture.loader.data(for: url)
            _ = try await strict.loader.data(for: url)
            await server.stop()

            clock.advance(by: 1 + 200)
            #expect(try await fixture.loader.response(for: ResourceRequest(url)).source == .stale)
            #expect(await error { try await strict.loader.data(for: url) }?.code == .transport)
            clock.advance(by: 101)
            #expect(await error { try await fixture.loader.data(for: url) }?.code == .transport)
        }
    }

    @Test func unknownHostGetsTheStaleEntry() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set("/p", .init(size: 300, seed: 8, cacheControl: "max-age=1"))
                _ = try await fixture.loader.data(for: server.url("/p"))
                clock.advance(by: 10)
                // A real lookup of an unknown name takes as long as the machine's resolver does (up
                // to its timeout), so the DNS failure is injected.
                var configuration = fixture.loader.configuration
                configuration.maximumStaleness = .seconds(60)
                let offline = ResourceLoader(
                    cache: fixture.cache, transport: FailingTransport(error: URLError(.cannotFindHost)),
                    configuration: configuration)
                let stale = try await offline.response(for: ResourceRequest(server.url("/p")))
                #expect(stale.source == .stale)
                #expect(stale.data == TestBody.bytes(300, seed: 8))
                #expect(stale.originFailure?.code == .transport)
                #expect((stale.originFailure?.cause as? URLError)?.code == .cannotFindHost)
            }
        }
    }

    @Test func requestWithNoStoredEntryStillFailsNamingTheURL() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try makeFixture(directory, clock: TestClock())
            let server = try await TestServer.start()
            let url = server.url("/never-fetched")
            await server.stop()
            let failure = await error { try await fixture.loader.data(for: url) }
            #expect(failure?.code == .transport)
            #expect(failure?.message.contains(url.absoluteString) == true)
            #expect(fixture.loader.statistics.staleServes == 0)
        }
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndOneBackgroundRequestBringsTheNewBytes() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set(
                    "/feed",
                    .init(size: 40_000, seed: 1, etag: "\"v1\"", cacheControl: "max-age=1, stale-while-revalidate=60"))
                let url = server.url("/feed")
                _ = try await fixture.loader.data(for: url)

                // The origin holds its answer until the gate opens: the stale requests must not wait for it.
                let gate = Gate()
                server.set(
                    "/feed",
                    .init(
                        size: 40_000, seed: 2, etag: "\"v2\"", cacheControl: "max-age=60, stale-while-revalidate=60",
                        responseGate: gate))
                clock.advance(by: 10)
                let first = try await fixture.loader.response(for: ResourceRequest(url))
                let second = try await fixture.loader.response(for: ResourceRequest(url), delivery: .file)
                #expect(first.source == .stale)
                #expect(first.originFailure == nil)
                #expect(first.data == TestBody.bytes(40_000, seed: 1))
                #expect(second.source == .stale)
                #expect(try Data(contentsOf: try #require(second.fileURL)) == TestBody.bytes(40_000, seed: 1))

                gate.open()
                await fixture.loader.waitForBackgroundRevalidations()
                let stats = server.stats.value
                #expect(stats.requests == 2)
                #expect(stats.conditionalRequests == 1)
                #expect(fixture.loader.statistics.backgroundRevalidations == 2)
                #expect(fixture.loader.statistics.staleServes == 2)

                let next = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(next.source == .disk)
                #expect(next.data == TestBody.bytes(40_000, seed: 2))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func ageHeaderShortensFreshness() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set("/aged", .init(size: 100, seed: 1, cacheControl: "max-age=60", headers: ["Age": "50"]))
                _ = try await fixture.loader.data(for: server.url("/aged"))
                clock.advance(by: 9)
                _ = try await fixture.loader.data(for: server.url("/aged"))
                #expect(server.stats.value.requests == 1)
                clock.advance(by: 2)
                _ = try await fixture.loader.data(for: server.url("/aged"))
                #expect(server.stats.value.requests == 2)
            }
        }
    }
}

/// A transport whose every request fails with `error` before any response: fault injection.
private struct FailingTransport: HTTPTransport {
    let error: URLError

    func send(
        _ request: URLRequest, onResponse: @escaping @Sendable (HTTPURLResponse) throws -> Void,
        onData: @escaping @Sendable (Data) throws -> Void
    ) async throws -> HTTPURLResponse {
        throw error
    }
}
