import Foundation
import Stash
import Testing

@testable import StashHTTP

/// The `.http` cache policy: freshness from the response's headers, revalidation with
/// validators, and `no-store` / `no-cache`.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderHTTPPolicyTests {
    private func makeFixture(_ directory: URL, clock: TestClock) throws -> Fixture {
        try Fixture(directory: directory) { configuration in
            configuration.cachePolicy = .http
            configuration.clock = clock.function
        }
    }

    @Test func freshEntryIsServedWithoutARequestUntilMaxAgePasses() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set("/feed", .init(size: 500, seed: 1, etag: "\"v1\"", cacheControl: "max-age=60"))
                _ = try await fixture.loader.data(for: server.url("/feed"))
                clock.advance(by: 59)
                _ = try await fixture.loader.data(for: server.url("/feed"))
                #expect(server.stats.value.requests == 1)
                clock.advance(by: 2)
                _ = try await fixture.loader.data(for: server.url("/feed"))
                #expect(server.stats.value.requests == 2)
                #expect(server.stats.value.conditionalRequests == 1)
            }
        }
    }

    @Test func staleEntryIsRevalidatedAnd304ServesTheStoredBytesWithoutABody() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                server.set("/image", .init(size: 200_000, seed: 4, etag: "\"abc\"", cacheControl: "max-age=10"))
                let original = try await fixture.loader.data(for: server.url("/image"))
                let sentBefore = server.stats.value.bodyBytesSent
                #expect(sentBefore == 200_000)
                clock.advance(by: 11)

                let response = try await fixture.loader.response(for: ResourceRequest(server.url("/image")))
                #expect(response.source == .revalidated)
                #expect(response.data == original)
                let stats = server.stats.value
                #expect(stats.requests == 2)
                #expect(stats.notModified == 1)
                #expect(stats.bodyBytesSent == sentBefore)
                #expect(fixture.loader.statistics.revalidations == 1)
                #expect(fixture.loader.statistics.notModified == 1)

                // The 304 refreshed the entry's freshness: the next 10 seconds need no request.
                clock.advance(by: 9)
                #expect(try await fixture.loader.data(for: server.url("/image")) == original)
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func revalidatesWithIfModifiedSinceWhenThereIsNoETag() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                let modified = "Tue, 15 Nov 1994 12:45:26 GMT"
                server.set("/page", .init(size: 100, seed: 5, lastModified: modified, cacheControl: "no-cache"))
                let original = try await fixture.loader.data(for: server.url("/page"))
                #expect(
                    try await fixture.cache.attributes(forKey: server.url("/page").absoluteString)?.metadata
                        .lastModified == modified)
                // no-cache: revalidated on every use, with no clock change.
                #expect(try await fixture.loader.data(for: server.url("/page")) == original)
                #expect(try await fixture.loader.data(for: server.url("/page")) == original)
                #expect(server.stats.value.requests == 3)
                #expect(server.stats.value.notModified == 2)
            }
        }
    }

    @Test func changedETagReplacesTheEntry() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try makeFixture(directory, clock: clock)
                let url = server.url("/avatar")
                server.set("/avatar", .init(size: 70_000, seed: 1, etag: "\"one\"", cacheControl: "max-age=5"))
                #expect(try await fixture.loader.data(for: url) == TestBody.bytes(70_000, seed: 1))
                server.set("/avatar", .init(size: 80_000, seed: 2, etag: "\"two\"", cacheControl: "max-age=5"))
                clock.advance(by: 6)
                let response = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(response.source == .network)
                #expect(response.data == TestBody.bytes(80_000, seed: 2))
                #expect(server.stats.value.conditionalRequests == 1)
                #expect(server.stats.value.notModified == 0)
                let attributes = try #require(try await fixture.cache.attributes(forKey: url.absoluteString))
                #expect(attributes.metadata.etag == "\"two\"")
                #expect(attributes.size == 80_000)
                #expect(
                    try await fixture.loader.data(for: url, cachePolicy: .cacheOnly) == TestBody.bytes(80_000, seed: 2))
            }
        }
    }

    @Test func noStoreResponsesAreDeliveredButNotCached() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try makeFixture(directory, clock: TestClock())
                server.set("/secret", .init(size: 50_000, seed: 9, cacheControl: "no-store"))
                let data = try await fixture.loader.data(for: server.url("/secret"))
                #expect(data == TestBody.bytes(50_000, seed: 9))
                #expect(try fixture.cache.totalCount == 0)
                let fileError = await error { try await fixture.loader.fileURL(for: server.url("/secret")) }
                #expect(fileError?.code == .invalidResponse)
                #expect(server.stats.value.requests == 2)
                #expect(fixture.downloads.isEmpty)
                // .cacheFirst stores whatever the headers say.
                _ = try await fixture.loader.data(for: server.url("/secret"), cachePolicy: .cacheFirst)
                #expect(try fixture.cache.totalCount == 1)
            }
        }
    }

    @Test func expiresHeaderGivesFreshnessRelativeToDate() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()  // 2027-01-15 08:00:00 UTC
                let fixture = try makeFixture(directory, clock: clock)
                server.set(
                    "/report",
                    .init(
                        size: 10, seed: 1, etag: "\"r\"", expires: "Fri, 15 Jan 2027 08:30:00 GMT",
                        headers: ["Date": "Fri, 15 Jan 2027 08:00:00 GMT"]))
                _ = try await fixture.loader.data(for: server.url("/report"))
                clock.advance(by: 29 * 60)
                _ = try await fixture.loader.data(for: server.url("/report"))
                #expect(server.stats.value.requests == 1)
                clock.advance(by: 2 * 60)
                _ = try await fixture.loader.data(for: server.url("/report"))
                #expect(server.stats.value.requests == 2)
                #expect(server.stats.value.notModified == 1)
            }
        }
    }
}
