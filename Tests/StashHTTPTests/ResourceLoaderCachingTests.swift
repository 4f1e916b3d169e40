import Foundation
import Stash
import Testing

@testable import StashHTTP

@Suite(.timeLimit(.minutes(2)))
struct ResourceLoaderCachingTests {
    @Test func secondPassOver200URLsMakesNoRequestsEvenFromANewLoader() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                // Sizes on both sides of the 32 KiB inline threshold: some bodies stay in memory,
                // others stream to a download file.
                let paths = (0..<200).map { "/photos/\($0)/\(($0 * 7919) % 100_000)" }
                let fixture = try Fixture(directory: directory)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for path in paths {
                        group.addTask {
                            let data = try await fixture.loader.data(for: server.url(path))
                            let size = Int(path.split(separator: "/").last!)!
                            #expect(data == TestBody.bytes(size, seed: TestBody.seed(for: path)))
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(server.stats.value.requests == 200)
                for path in paths { _ = try await fixture.loader.data(for: server.url(path)) }
                #expect(server.stats.value.requests == 200)
                // Every body was kept in the memory tier as it was delivered.
                #expect(fixture.loader.statistics.memoryHits == 200)
                #expect(fixture.loader.statistics.diskHits == 0)
                #expect(fixture.loader.statistics.networkLoads == 200)

                let relaunched = try Fixture(directory: directory)
                for path in paths {
                    let data = try await relaunched.loader.data(for: server.url(path))
                    let size = Int(path.split(separator: "/").last!)!
                    #expect(data.count == size)
                }
                #expect(server.stats.value.requests == 200)
                #expect(relaunched.loader.statistics.requests == 0)
                #expect(relaunched.loader.statistics.diskHits == 200)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func cacheOnlyServesStoredEntriesAndThrowsNotFoundOnMiss() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let stored = try await fixture.loader.data(for: server.url("/a/1000"))
                let offline = try await fixture.loader.data(for: server.url("/a/1000"), cachePolicy: .cacheOnly)
                #expect(offline == stored)
                let miss = await error {
                    try await fixture.loader.data(for: server.url("/b/10"), cachePolicy: .cacheOnly)
                }
                #expect(miss?.code == .notFound)
                #expect(miss?.message.contains(server.url("/b/10").absoluteString) == true)
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test func reloadFetchesAgainAndReplacesTheEntry() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                server.set("/doc", .init(size: 50_000, seed: 1))
                #expect(try await fixture.loader.data(for: server.url("/doc")) == TestBody.bytes(50_000, seed: 1))
                server.set("/doc", .init(size: 60_000, seed: 2))
                #expect(try await fixture.loader.data(for: server.url("/doc")) == TestBody.bytes(50_000, seed: 1))
                let reloaded = try await fixture.loader.data(for: server.url("/doc"), cachePolicy: .reload)
                #expect(reloaded == TestBody.bytes(60_000, seed: 2))
                #expect(try await fixture.loader.data(for: server.url("/doc")) == reloaded)
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func cacheKeyHookDropsVolatileQueryParameters() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { configuration in
                    configuration.cacheKey = ResourceLoader.Configuration.cacheKey(droppingQueryItems: ["token"])
                }
                server.set("/signed", .init(size: 2000, seed: 7))
                let first = try await fixture.loader.data(for: server.url("/signed?token=aaa&w=200"))
                let second = try await fixture.loader.data(for: server.url("/signed?w=200&token=bbb"))
                #expect(first == second)
                #expect(server.stats.value.requests == 1)
                let key = fixture.loader.cacheKey(for: ResourceRequest(server.url("/signed?token=ccc&w=200")))
                #expect(key == server.url("/signed?w=200").absoluteString)
                _ = try await fixture.loader.data(for: server.url("/signed?w=400&token=aaa"))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func variantsAreStoredAsSeparateEntries() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                server.set("/photo", .init(size: 3000, seed: 3))
                let url = server.url("/photo")
                _ = try await fixture.loader.data(for: ResourceRequest(url, variant: "small"))
                _ = try await fixture.loader.data(for: ResourceRequest(url, variant: "large"))
                _ = try await fixture.loader.data(for: ResourceRequest(url, variant: "small"))
                #expect(server.stats.value.requests == 2)
                #expect(
                    try fixture.cache.allKeys.sorted() == [
                        url.absoluteString + "#large", url.absoluteString + "#small",
                    ])
            }
        }
    }

    @Test(arguments: [100, 40_000, 3_000_000])
    func fileURLHandsBackTheCachedFile(size: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let path = "/files/\(size)"
                let file = try await fixture.loader.fileURL(for: server.url(path))
                #expect(file.path.hasPrefix(directory.path))
                #expect(try TestBody.fileMatches(file, size: size, seed: TestBody.seed(for: path)))
                #expect(try await fixture.loader.fileURL(for: server.url(path)) == file)
                let response = try await fixture.loader.response(for: ResourceRequest(server.url(path)))
                #expect(response.source == .disk)
                #expect(response.data?.count == size)
                #expect(response.metadata.contentType == "application/octet-stream")
                #expect(server.stats.value.requests == 1)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }
}
