import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Responses with `Vary` (RFC 9111 §4.1): served only to requests with the same values of the
/// headers named, several variants of one URL kept side by side.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderVaryTests {
    private func request(_ url: URL, language: String) -> URLRequest {
        var request = URLRequest(url: url)
        request.setValue(language, forHTTPHeaderField: "Accept-Language")
        return request
    }

    @Test(arguments: [ResourceLoader.CachePolicy.cacheFirst, .http])
    func rfc9111Section4_1_varyKeepsEachLanguageAndNeverServesOneTheOthersBody(policy: ResourceLoader.CachePolicy)
        async throws
    {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.cachePolicy = policy }
                server.set(
                    "/greeting",
                    .init(
                        size: 1_000, seed: 1, cacheControl: "max-age=600", headers: ["Vary": "Accept-Language"],
                        seedByHeader: ("Accept-Language", ["en": 1, "fr": 2])))
                let url = server.url("/greeting")
                let english = TestBody.bytes(1_000, seed: 1)
                let french = TestBody.bytes(1_000, seed: 2)

                #expect(try await fixture.loader.data(for: request(url, language: "en")) == english)
                #expect(try await fixture.loader.data(for: request(url, language: "en")) == english)
                #expect(server.stats.value.requests == 1)
                #expect(try await fixture.loader.data(for: request(url, language: "fr")) == french)
                #expect(server.stats.value.requests == 2)
                // Both variants stay stored: neither language is fetched again.
                #expect(try await fixture.loader.data(for: request(url, language: "en")) == english)
                #expect(try await fixture.loader.data(for: request(url, language: "fr")) == french)
                fixture.loader.memory.removeAll()
                #expect(try await fixture.loader.data(for: request(url, language: "fr")) == french)
                #expect(try await fixture.loader.data(for: request(url, language: "en")) == english)
                let file = try await fixture.loader.fileURL(
                    for: ResourceRequest(request(url, language: "fr"), cachePolicy: policy))
                #expect(try Data(contentsOf: file) == french)
                #expect(server.stats.value.requests == 2)
                // A third language is a third variant.
                #expect(
                    try await fixture.loader.data(for: request(url, language: "de")) == TestBody.bytes(1_000, seed: 1))
                #expect(try await fixture.loader.data(for: request(url, language: "fr")) == french)
                #expect(server.stats.value.requests == 3)
            }
        }
    }

    @Test func varyStarIsNeverReused() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                server.set("/any", .init(size: 500, seed: 3, headers: ["Vary": "*"]))
                #expect(try await fixture.loader.data(for: server.url("/any")) == TestBody.bytes(500, seed: 3))
                #expect(try await fixture.loader.data(for: server.url("/any")) == TestBody.bytes(500, seed: 3))
                #expect(server.stats.value.requests == 2)
            }
        }
    }
}
