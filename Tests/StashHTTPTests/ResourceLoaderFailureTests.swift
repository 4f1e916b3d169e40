import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Failed transfers: nothing is cached, an old entry stays, errors name the URL and cause,
/// and transient failures are retried.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderFailureTests {
    private static let quickRetries = ResourceLoader.RetryPolicy(maximumRetries: 2, initialDelay: .zero)

    /// Stores an old entry for `path`, then makes the server fail with `failing`.
    private func storeOldEntry(_ fixture: Fixture, _ server: TestServer, path: String, size: Int) async throws
        -> DiskCache.Attributes
    {
        server.set(path, .init(size: size, seed: 1, etag: "\"old\""))
        _ = try await fixture.loader.data(for: server.url(path))
        return try #require(try await fixture.cache.attributes(forKey: server.url(path).absoluteString))
    }

    private func expectOldEntryIntact(
        _ fixture: Fixture, _ server: TestServer, path: String, size: Int, attributes: DiskCache.Attributes
    ) async throws {
        let key = server.url(path).absoluteString
        #expect(try await fixture.cache.data(forKey: key) == TestBody.bytes(size, seed: 1))
        let now = try #require(try await fixture.cache.attributes(forKey: key))
        #expect(now.metadata == attributes.metadata)
        #expect(now.created == attributes.created)
        #expect(fixture.transientDownloads.isEmpty)
    }

    @Test(arguments: [(10_000, 5_000), (500_000, 200_000)])
    func truncatedBodyLeavesNothingCachedAndTheOldEntryIntact(size: Int, truncateAfter: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let old = try await storeOldEntry(fixture, server, path: "/t", size: size)
                server.set("/t", .init(size: size, seed: 2, etag: "\"new\"", truncateAfter: truncateAfter))
                let failure = await error { try await fixture.loader.data(for: server.url("/t"), cachePolicy: .reload) }
                #expect(failure?.code == .transport || failure?.code == .invalidResponse)
                #expect(failure?.message.contains(server.url("/t").absoluteString) == true)
                #expect(server.stats.value.truncated == 1)
                try await expectOldEntryIntact(fixture, server, path: "/t", size: size, attributes: old)
                // A body stored as a file, with an ETag, stays as a partial download to resume.
                #expect(fixture.partialSizes == (size >= 32_768 ? [truncateAfter] : []))

                // Nothing of the truncated body was cached under a new key either.
                server.set("/fresh", .init(size: size, seed: 3, truncateAfter: truncateAfter))
                #expect(await error { try await fixture.loader.data(for: server.url("/fresh")) } != nil)
                #expect(try fixture.cache.totalCount == 1)
                #expect(fixture.transientDownloads.isEmpty)
            }
        }
    }

    @Test func truncatedBodyIsRetried() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.retryPolicy = Self.quickRetries }
                server.set("/t", .init(size: 100_000, seed: 2, truncateAfter: 1000))
                let failure = await error { try await fixture.loader.data(for: server.url("/t")) }
                #expect(failure?.message.contains("3 attempts") == true)
                #expect(server.stats.value.requests == 3)
                #expect(server.stats.value.truncated == 3)
                #expect(fixture.loader.statistics.retries == 2)
                #expect(fixture.loader.statistics.failedTransfers == 1)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func serverErrorIsRetriedThenReportedAndTheOldEntryIsIntact() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.retryPolicy = Self.quickRetries }
                let old = try await storeOldEntry(fixture, server, path: "/e", size: 40_000)
                server.set("/e", .init(status: 500))
                let failure = await error { try await fixture.loader.data(for: server.url("/e"), cachePolicy: .reload) }
                #expect(failure?.code == .invalidResponse)
                #expect((failure?.cause as? HTTPStatusError)?.statusCode == 500)
                #expect(failure?.message.contains("500") == true)
                #expect(failure?.message.contains(server.url("/e").absoluteString) == true)
                #expect(server.stats.value.requests == 4)
                try await expectOldEntryIntact(fixture, server, path: "/e", size: 40_000, attributes: old)
            }
        }
    }

    @Test func transientFailuresAreRetriedUntilTheySucceed() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.retryPolicy = Self.quickRetries }
                server.set("/flaky", .init(size: 5000, seed: 4, failuresBeforeSuccess: 2, failureStatus: 503))
                #expect(try await fixture.loader.data(for: server.url("/flaky")) == TestBody.bytes(5000, seed: 4))
                #expect(server.stats.value.requests == 3)
                #expect(fixture.loader.statistics.retries == 2)
            }
        }
    }

    @Test func clientErrorsAreNotRetried() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.retryPolicy = Self.quickRetries }
                let missing = await error { try await fixture.loader.data(for: server.url("/missing")) }
                #expect(missing?.code == .notFound)
                #expect((missing?.cause as? HTTPStatusError)?.statusCode == 404)
                server.set("/forbidden", .init(status: 403))
                let forbidden = await error { try await fixture.loader.data(for: server.url("/forbidden")) }
                #expect(forbidden?.code == .invalidResponse)
                #expect((forbidden?.cause as? HTTPStatusError)?.statusCode == 403)
                #expect(server.stats.value.requests == 2)
                #expect(try fixture.cache.totalCount == 0)
            }
        }
    }

    @Test(arguments: [false, true])
    func responseOverTheMaximumSizeIsRefused(chunked: Bool) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.maximumResponseSize = .bytes(100_000) }
                server.set("/big", .init(size: 300_000, seed: 1, chunked: chunked))
                let failure = await error { try await fixture.loader.data(for: server.url("/big")) }
                #expect(failure?.code == .tooLarge)
                #expect(failure?.message.contains(server.url("/big").absoluteString) == true)
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.downloads.isEmpty)
                server.set("/small", .init(size: 100_000, seed: 1, chunked: chunked))
                #expect(try await fixture.loader.data(for: server.url("/small")).count == 100_000)
            }
        }
    }

    @Test func connectionRefusedIsATransportErrorNamingTheURL() async throws {
        try await withTemporaryDirectory { directory in
            let fixture = try Fixture(directory: directory)
            // A port that was just free: nothing listens there.
            let server = try await TestServer.start()
            let url = server.url("/gone/10")
            await server.stop()
            let failure = await error { try await fixture.loader.data(for: url) }
            #expect(failure?.code == .transport)
            #expect(failure?.message.contains(url.absoluteString) == true)
            #expect(failure?.cause != nil)
        }
    }

    @Test func abandonedDownloadFilesAreRemovedWhenALoaderStarts() async throws {
        try await withTemporaryDirectory { directory in
            let downloads = directory.appendingPathComponent("downloads")
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            func make(_ name: String, age: TimeInterval) throws -> String {
                let path = downloads.appendingPathComponent(name).path
                #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 1000)))
                let date = Date().addingTimeInterval(-age)
                try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
                return path
            }
            let crashed = try make("crashed.download", age: 7200)
            let live = try make("live.download", age: 7200)
            let young = try make("young.download", age: 0)
            // Another process's transfer holds its file locked.
            let fd = open(live, O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(flock(fd, LOCK_EX) == 0)

            let fixture = try Fixture(directory: directory)
            #expect(fixture.downloads.sorted() == ["live.download", "young.download"])
            #expect(!FileManager.default.fileExists(atPath: crashed))
            #expect(FileManager.default.fileExists(atPath: young))
        }
    }
}
