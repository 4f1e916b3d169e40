import Foundation
import Stash
import Testing

@testable import StashHTTP

/// Bodies that stop midway are kept as partial downloads and resumed with `Range` + `If-Range`,
/// in the same process or after the one downloading was killed.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderResumeTests {
    private let size = 300_000
    private let cut = 120_000

    /// Loads `path` once with its body cut after `cut` bytes, leaving a partial download.
    private func leavePartial(_ fixture: Fixture, _ server: TestServer, path: String) async throws {
        server.set(path, .init(size: size, seed: 1, etag: "\"r1\"", truncateAfter: cut))
        #expect(await error { try await fixture.loader.data(for: server.url(path)) } != nil)
        #expect(fixture.partialSizes == [cut])
        #expect(try fixture.cache.totalCount == 0)
    }

    @Test func truncatedBodyIsResumedFromWhereItStoppedWithRangeAndIfRange() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                try await leavePartial(fixture, server, path: "/big")
                server.set("/big", .init(size: size, seed: 1, etag: "\"r1\""))
                let sentBefore = server.stats.value.bodyBytesSent

                let data = try await fixture.loader.data(for: server.url("/big"))
                #expect(data == TestBody.bytes(size, seed: 1))
                let ranges = server.stats.value.ranges
                #expect(ranges.map(\.range) == ["bytes=\(cut)-"])
                #expect(ranges.map(\.ifRange) == ["\"r1\""])
                #expect(server.stats.value.bodyBytesSent - sentBefore == size - cut)
                #expect(fixture.loader.statistics.resumedDownloads == 1)
                #expect(fixture.downloads.isEmpty)
                let stored = try #require(try await fixture.cache.attributes(forKey: server.url("/big").absoluteString))
                #expect(stored.size == size)
                #expect(stored.metadata.etag == "\"r1\"")
            }
        }
    }

    @Test func lastModifiedAloneIsEnoughToResume() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let modified = "Tue, 03 Nov 2026 10:00:00 GMT"
                server.set("/lm", .init(size: size, seed: 6, lastModified: modified, truncateAfter: cut))
                #expect(await error { try await fixture.loader.data(for: server.url("/lm")) } != nil)
                server.set("/lm", .init(size: size, seed: 6, lastModified: modified))
                #expect(try await fixture.loader.data(for: server.url("/lm")) == TestBody.bytes(size, seed: 6))
                #expect(server.stats.value.ranges.map(\.ifRange) == [modified])
                #expect(fixture.loader.statistics.resumedDownloads == 1)
            }
        }
    }

    @Test func serverIgnoringRangeSendsTheWholeBodyWhichReplacesThePartial() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                try await leavePartial(fixture, server, path: "/big")
                server.set("/big", .init(size: size, seed: 1, etag: "\"r1\"", honoursRange: false))
                let data = try await fixture.loader.data(for: server.url("/big"))
                #expect(data == TestBody.bytes(size, seed: 1))
                #expect(server.stats.value.ranges.count == 1)
                #expect(fixture.loader.statistics.resumedDownloads == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func changedETagStartsOverWithTheNewBody() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                try await leavePartial(fixture, server, path: "/big")
                server.set("/big", .init(size: size + 1_000, seed: 2, etag: "\"r2\""))
                let data = try await fixture.loader.data(for: server.url("/big"))
                #expect(data == TestBody.bytes(size + 1_000, seed: 2))
                #expect(server.stats.value.ranges.map(\.ifRange) == ["\"r1\""])
                #expect(fixture.loader.statistics.resumedDownloads == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func partialContentThatDoesNotContinueThePartialIsRefusedAndTheBodyFetchedWhole() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                try await leavePartial(fixture, server, path: "/big")
                server.set("/big", .init(size: size, seed: 1, etag: "\"r1\"", answersRangeFromZero: true))
                #expect(try await fixture.loader.data(for: server.url("/big")) == TestBody.bytes(size, seed: 1))
                #expect(server.stats.value.ranges.map(\.range) == ["bytes=\(cut)-"])
                #expect(server.stats.value.requests == 3)
                #expect(fixture.loader.statistics.resumedDownloads == 0)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func rangeNotSatisfiableDropsThePartialAndFetchesTheWholeBody() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                try await leavePartial(fixture, server, path: "/big")
                // The same ETag, but shorter than the partial: the range starts past its end.
                server.set("/big", .init(size: 100_000, seed: 3, etag: "\"r1\""))
                let data = try await fixture.loader.data(for: server.url("/big"))
                #expect(data == TestBody.bytes(100_000, seed: 3))
                #expect(server.stats.value.ranges.map(\.range) == ["bytes=\(cut)-"])
                #expect(server.stats.value.requests == 3)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func retryAfterATruncatedBodyResumesIt() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) {
                    $0.retryPolicy = .init(maximumRetries: 1, initialDelay: .zero)
                }
                // The server cuts only the first response: the retry carries a Range it honours.
                server.set(
                    "/big", .init(size: size, seed: 4, etag: "\"r4\"", truncateAfter: cut, truncatedResponses: 1))
                let data = try await fixture.loader.data(for: server.url("/big"))
                #expect(data == TestBody.bytes(size, seed: 4))
                #expect(server.stats.value.ranges.map(\.range) == ["bytes=\(cut)-"])
                #expect(fixture.loader.statistics.resumedDownloads == 1)
            }
        }
    }

    @Test func downloadOfAKilledProcessIsResumedByTheNextRunAndEndsWithTheOriginsBytes() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let size = 24 * 1_048_576
                let pause = 8 * 1_048_576
                let gate = Gate()
                // The body stops after `pause` bytes until the gate opens: a slow origin, as slow as needed.
                server.set("/video", .init(size: size, seed: 9, etag: "\"video\"", gate: gate, pauseAt: pause))
                let url = server.url("/video")
                let child = try RunningWorker(["fetch", url.absoluteString, directory.path])
                try await child.lines.wait { lines in
                    lines.contains { $0.hasPrefix("PROGRESS ") && Int($0.dropFirst(9)) ?? 0 >= pause / 2 }
                }
                try await child.kill()
                #expect(!child.lines.value.contains { $0.hasPrefix("DONE") })
                gate.open()

                let fixture = try Fixture(directory: directory)
                let kept = try #require(fixture.partialSizes.first)
                #expect(kept >= pause / 2)
                let file = try await fixture.loader.fileURL(for: url)
                let ranges = server.stats.value.ranges
                #expect(ranges.count == 1)
                #expect(ranges.first?.range == "bytes=\(kept)-")
                #expect(ranges.first?.ifRange == "\"video\"")
                #expect(try TestBody.fileMatches(file, size: size, seed: 9))
                #expect(fixture.loader.statistics.resumedDownloads == 1)
                #expect(fixture.downloads.isEmpty)
                let report = try await fixture.cache.verify(repair: false)
                #expect(report.isHealthy)
            }
        }
    }

    @Test func partialDownloadsCountAgainstTheByteLimitAndAreRemovedOnRequest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory, sizeLimit: .bytes(1_000_000))
                for index in 0..<7 { server.set("/e\(index)", .init(size: 100_000, seed: UInt64(index))) }
                for index in 0..<7 { _ = try await fixture.loader.data(for: server.url("/e\(index)")) }
                #expect(try fixture.cache.totalSize == .bytes(700_000))

                server.set("/big", .init(size: 900_000, seed: 1, etag: "\"b\"", truncateAfter: 400_000))
                #expect(await error { try await fixture.loader.data(for: server.url("/big")) } != nil)
                #expect(fixture.partialSizes == [400_000])
                // The entries and the partial fit the limit together.
                #expect(try fixture.cache.totalSize.bytes <= 600_000)
                #expect(ResourceLoader.partialDownloads(in: fixture.cache).size == .bytes(400_000))

                let removed = ResourceLoader.removePartialDownloads(in: fixture.cache)
                #expect(removed.count == 1)
                #expect(removed.size == .bytes(400_000))
                #expect(fixture.downloads.isEmpty)
            }
        }
    }
}
