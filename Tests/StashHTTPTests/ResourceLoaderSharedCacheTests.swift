import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A shared cache never hands one user's response to another (RFC 9111 §3.5, §5.2.2.7): two
/// loaders with their own directories over one shared tier, as two instances of a fleet, in
/// front of a real origin.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderSharedCacheTests {
    /// One response a user's request may get, and whether a shared cache may keep it.
    struct Row: Sendable, CustomTestStringConvertible {
        var section: String
        var cacheControl: String
        var authorization: String?
        var isShareable: Bool
        var testDescription: String { "§\(section) \(cacheControl) auth=\(authorization ?? "-")" }
    }

    static let rows: [Row] = [
        Row(section: "5.2.2.7", cacheControl: "private, max-age=600", isShareable: false),
        Row(section: "5.2.2.7", cacheControl: "max-age=600, PRIVATE", isShareable: false),
        Row(section: "5.2.2.5", cacheControl: "no-store, max-age=600", isShareable: false),
        Row(section: "3.5", cacheControl: "max-age=600", authorization: "Bearer user-a", isShareable: false),
        Row(section: "3.5", cacheControl: "public, max-age=600", authorization: "Bearer user-a", isShareable: true),
        Row(section: "3.5", cacheControl: "s-maxage=600", authorization: "Bearer user-a", isShareable: true),
        Row(
            section: "3.5", cacheControl: "max-age=600, must-revalidate", authorization: "Bearer user-a",
            isShareable: true),
        Row(section: "5.2.2.9", cacheControl: "public, max-age=600", isShareable: true),
        Row(section: "3", cacheControl: "max-age=600", isShareable: true),
    ]

    private func request(_ url: URL, authorization: String?) -> URLRequest {
        var request = URLRequest(url: url)
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        return request
    }

    private func loader(
        _ directory: URL, tier: RecordingSharedTier, kind: HTTPCacheKind, policy: ResourceLoader.CachePolicy
    ) throws -> Fixture {
        try Fixture(directory: directory) { configuration in
            configuration.cacheKind = kind
            configuration.cachePolicy = policy
            configuration.sharedTier = tier
            configuration.sharedTierWriteMode = .writeThrough
        }
    }

    @Test(arguments: rows)
    func rfc9111Section3_5_sharedLoadersNeverServeUserAsResponseToUserB(row: Row) async throws {
        for policy in [ResourceLoader.CachePolicy.http, .cacheFirst] {
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let tier = RecordingSharedTier()
                    let instanceA = try loader(
                        directory.appendingPathComponent("a"), tier: tier, kind: .shared, policy: policy)
                    let instanceB = try loader(
                        directory.appendingPathComponent("b"), tier: tier, kind: .shared, policy: policy)
                    server.set("/me", .init(size: 2_000, seed: 7, cacheControl: row.cacheControl))
                    let url = server.url("/me")

                    _ = try await instanceA.loader.data(for: request(url, authorization: row.authorization))
                    let answer = try await instanceB.loader.response(
                        for: ResourceRequest(request(url, authorization: row.authorization.map { _ in "Bearer b" })))
                    #expect(tier.keys == (row.isShareable ? [url.absoluteString] : []), "\(policy)")
                    #expect(answer.source == (row.isShareable ? .shared : .network), "\(policy)")
                    #expect(server.stats.value.requests == (row.isShareable ? 1 : 2), "\(policy)")
                    // Nor does a shared loader keep it for the next user in its own tiers.
                    _ = try await instanceA.loader.data(for: request(url, authorization: "Bearer c"))
                    let expected = row.isShareable ? 1 : 3
                    #expect(server.stats.value.requests == expected, "\(policy)")
                }
            }
        }
    }

    @Test(arguments: rows)
    func rfc9111Section3_5_aPrivateLoaderKeepsItsUsersResponseButSharesOnlyWhatASharedCacheMay(row: Row)
        async throws
    {
        for policy in [ResourceLoader.CachePolicy.http, .cacheFirst] {
            try await withTestServer { server in
                try await withTemporaryDirectory { directory in
                    let tier = RecordingSharedTier()
                    let app = try loader(directory, tier: tier, kind: .private, policy: policy)
                    server.set("/me", .init(size: 2_000, seed: 7, cacheControl: row.cacheControl))
                    let url = server.url("/me")
                    _ = try await app.loader.data(for: request(url, authorization: row.authorization))
                    #expect(tier.storedKeys.withLock { $0 } == (row.isShareable ? [url.absoluteString] : []))
                    // The app's own cache keeps it: under .http unless no-store, and only while
                    // fresh by max-age (s-maxage is for shared caches, §5.2.2.10).
                    app.loader.memory.removeAll()
                    _ = try await app.loader.data(for: request(url, authorization: row.authorization))
                    let refetched =
                        policy == .http
                        && (row.cacheControl.contains("no-store") || !row.cacheControl.contains("max-age="))
                    #expect(server.stats.value.requests == (refetched ? 2 : 1), "\(policy)")
                }
            }
        }
    }

    @Test func rfc9111Section4_3_4_a304ThatMakesTheResponsePrivateRemovesItFromTheSharedTier() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let tier = RecordingSharedTier()
                let clock = TestClock()
                let fixture = try Fixture(directory: directory) { configuration in
                    configuration.cachePolicy = .http
                    configuration.sharedTier = tier
                    configuration.sharedTierWriteMode = .writeThrough
                    configuration.clock = clock.function
                }
                server.set("/doc", .init(size: 500, seed: 2, etag: "\"1\"", cacheControl: "public, max-age=10"))
                _ = try await fixture.loader.data(for: server.url("/doc"))
                #expect(tier.keys == [server.url("/doc").absoluteString])
                clock.advance(by: 20)
                server.set("/doc", .init(size: 500, seed: 2, etag: "\"1\"", cacheControl: "private, max-age=10"))
                let response = try await fixture.loader.response(for: ResourceRequest(server.url("/doc")))
                #expect(response.source == .revalidated)
                #expect(tier.keys.isEmpty)
            }
        }
    }

    @Test func rfc9111Section5_2_2_10_theSharedTierKeepsFreshnessBySMaxAge() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let tier = RecordingSharedTier()
                let clock = TestClock()
                func instance(_ name: String) throws -> Fixture {
                    try Fixture(directory: directory.appendingPathComponent(name)) { configuration in
                        configuration.cachePolicy = .http
                        configuration.cacheKind = .shared
                        configuration.sharedTier = tier
                        configuration.sharedTierWriteMode = .writeThrough
                        configuration.clock = clock.function
                    }
                }
                server.set("/s", .init(size: 500, seed: 3, cacheControl: "max-age=0, s-maxage=600"))
                _ = try await instance("a").loader.data(for: server.url("/s"))
                clock.advance(by: 100)
                let answer = try await instance("b").loader.response(for: ResourceRequest(server.url("/s")))
                #expect(answer.source == .shared)
                #expect(server.stats.value.requests == 1)
            }
        }
    }
}
