#if Postgres
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres
    import Testing

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    extension PostgresTests {
        /// Two instances of a fleet (each its own disk cache) over one real PostgreSQL table, in
        /// front of a real origin: user A's `private` or `Authorization` response never reaches
        /// user B, and a `public` one is shared (RFC 9111 §3.5, §5.2.2.7, §5.2.2.9).
        @Suite struct SharedCacheLeakTests {
            let scratch = Scratch()

            func instance(_ shared: PostgresSharedTier, kind: HTTPCacheKind, policy: ResourceLoader.CachePolicy)
                throws -> ResourceLoader
            {
                let disk = try DiskCache(directory: scratch.directory(), sizeLimit: .megabytes(50))
                var configuration = ResourceLoader.Configuration(cachePolicy: policy)
                configuration.cacheKind = kind
                configuration.sharedTier = shared
                configuration.sharedTierWriteMode = .writeThrough
                return ResourceLoader(cache: disk, configuration: configuration)
            }

            func request(_ url: URL, user: String?) -> ResourceRequest {
                var request = URLRequest(url: url)
                if let user { request.setValue("Bearer \(user)", forHTTPHeaderField: "Authorization") }
                return ResourceRequest(request)
            }

            @Test(arguments: [
                ("private, max-age=600", false, false),
                ("max-age=600", true, false),
                ("public, max-age=600", true, true),
                ("s-maxage=600", true, true),
                ("public, max-age=600", false, true),
            ])
            func rfc9111Section3_5_userAsResponseReachesUserBOnlyWhenASharedCacheMayStoreIt(
                cacheControl: String, withAuthorization: Bool, isShared: Bool
            ) async throws {
                for kind in [HTTPCacheKind.private, .shared] {
                    for policy in [ResourceLoader.CachePolicy.http, .cacheFirst] {
                        let origin = try await Origin.start()
                        origin.cacheControl.withLock { $0 = cacheControl }
                        let shared = try await Postgres.tier()
                        defer { shared.shutdown() }
                        let first = try instance(shared, kind: kind, policy: policy)
                        let second = try instance(shared, kind: .shared, policy: policy)
                        let url = origin.url(4)

                        _ = try await first.data(for: request(url, user: withAuthorization ? "a" : nil))
                        let stored = try await shared.entry(forKey: url.absoluteString)
                        #expect((stored != nil) == isShared, "\(kind) \(policy)")
                        let answer = try await second.response(for: request(url, user: withAuthorization ? "b" : nil))
                        #expect(answer.source == (isShared ? .shared : .network), "\(kind) \(policy)")
                        #expect(origin.requests == (isShared ? 1 : 2), "\(kind) \(policy)")
                        await origin.stop()
                    }
                }
            }
        }
    }
#endif
