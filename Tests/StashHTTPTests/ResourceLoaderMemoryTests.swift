import Foundation
import Stash
import Testing

@testable import StashHTTP

/// The loader's memory tier of bodies: memory → disk → network, asserted on the server's
/// request counts.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderMemoryTests {
    /// Where the loader answered a default request for `url` from.
    private func source(_ fixture: Fixture, _ url: URL) async throws -> ResourceResponse.Source {
        try await fixture.loader.response(for: ResourceRequest(url)).source
    }

    /// Below the 32 KiB inline threshold (received in memory) and above it (streamed to a file).
    @Test(arguments: [1000, 100_000])
    func memoryHitMakesNoRequestReportsMemoryAndCountsAMemoryHit(size: Int) async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/photos/\(size)")
                let first = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(first.source == .network)

                let second = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(second.source == .memory)
                #expect(second.data == first.data)
                #expect(second.data == TestBody.bytes(size, seed: TestBody.seed(for: "/photos/\(size)")))
                #expect(second.metadata == first.metadata)
                #expect(second.metadata.contentType == "application/octet-stream")
                #expect(try await fixture.loader.data(for: url, cachePolicy: .cacheOnly) == first.data)

                #expect(server.stats.value.requests == 1)
                let statistics = fixture.loader.statistics
                #expect(statistics.memoryHits == 2)
                #expect(statistics.diskHits == 0)
                #expect(statistics.networkLoads == 1)
                #expect(fixture.loader.memory.totalCount == 1)
                #expect(fixture.loader.memory.totalCost == size)
                #expect(fixture.loader.versions.trackedKeyCount == 0)
            }
        }
    }

    @Test func theMemoryTiersPolicyComesFromTheConfiguration() async throws {
        try await withTemporaryDirectory { directory in
            #expect(try Fixture(directory: directory).loader.memory.policy == .adaptive)
            let fixture = try Fixture(directory: directory) { $0.memoryEvictionPolicy = .sieve }
            #expect(fixture.loader.memory.policy == .sieve)
        }
    }

    @Test func memoryHitsCountForTheDiskCachesEviction() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let cache = try DiskCache(
                    directory: directory,
                    configuration: .init(
                        sizeLimit: .bytes(3_000), lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed))
                let loader = ResourceLoader(cache: cache, configuration: .init(retryPolicy: .none))
                for name in ["a", "b", "c", "d"] { server.set("/\(name)", .init(size: 1_000, seed: 1)) }
                for name in ["a", "b", "c"] { _ = try await loader.data(for: server.url("/\(name)")) }
                #expect(try await loader.response(for: ResourceRequest(server.url("/a"))).source == .memory)
                _ = try await loader.data(for: server.url("/d"))
                // Without the memory hit reaching the disk, "a" would be its least recently used entry.
                let keys = Set(try cache.allKeys)
                #expect(keys == Set(["a", "c", "d"].map { server.url("/\($0)").absoluteString }))
                #expect(server.stats.value.requests == 4)
            }
        }
    }

    @Test func afterMemoryPressurePurgesMemoryTheBodyComesFromDiskWithoutARequest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/thumb/2000")
                let original = try await fixture.loader.data(for: url)
                fixture.loader.memory.handleMemoryPressure(.critical)
                #expect(fixture.loader.memory.totalCount == 0)

                let fromDisk = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(fromDisk.source == .disk)
                #expect(fromDisk.data == original)
                let fromMemory = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(fromMemory.source == .memory)
                #expect(fromMemory.data == original)

                #expect(server.stats.value.requests == 1)
                #expect(fixture.loader.statistics.diskHits == 1)
                #expect(fixture.loader.statistics.memoryHits == 1)
            }
        }
    }

    @Test func zeroMemoryCostLimitTurnsTheMemoryTierOff() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.memoryCostLimit = .zero }
                let url = server.url("/a/10")
                _ = try await fixture.loader.data(for: url)
                #expect(try await source(fixture, url) == .disk)
                #expect(try await source(fixture, server.url("/empty/0")) == .network)
                #expect(try await source(fixture, server.url("/empty/0")) == .disk)
                #expect(fixture.loader.memory.totalCount == 0)
                #expect(fixture.loader.statistics.memoryHits == 0)
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func bodiesOverATenthOfTheMemoryLimitStayOnDiskOnly() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.memoryCostLimit = .bytes(100_000) }
                _ = try await fixture.loader.data(for: server.url("/small/10000"))
                _ = try await fixture.loader.data(for: server.url("/large/10001"))
                #expect(try await source(fixture, server.url("/small/10000")) == .memory)
                #expect(try await source(fixture, server.url("/large/10001")) == .disk)
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func reloadReplacesTheMemoryCopy() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/doc")
                server.set("/doc", .init(size: 5000, seed: 1))
                _ = try await fixture.loader.data(for: url)
                #expect(try await source(fixture, url) == .memory)

                server.set("/doc", .init(size: 6000, seed: 2))
                let reloaded = try await fixture.loader.response(for: ResourceRequest(url, cachePolicy: .reload))
                #expect(reloaded.source == .network)
                #expect(reloaded.data == TestBody.bytes(6000, seed: 2))
                let next = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(next.source == .memory)
                #expect(next.data == TestBody.bytes(6000, seed: 2))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func fileDeliveryLeavesMemoryAloneAndADataRequestFillsIt() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/video/300000")
                _ = try await fixture.loader.fileURL(for: url)
                #expect(fixture.loader.memory.totalCount == 0)
                #expect(try await source(fixture, url) == .disk)
                #expect(try await source(fixture, url) == .memory)
                #expect(try await fixture.loader.fileURL(for: url).path.hasPrefix(directory.path))
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test func underHTTPAStaleMemoryCopyIsRevalidatedNotServed() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try Fixture(directory: directory) { configuration in
                    configuration.cachePolicy = .http
                    configuration.clock = clock.function
                }
                let url = server.url("/feed")
                server.set("/feed", .init(size: 800, seed: 6, etag: "\"f1\"", cacheControl: "max-age=10"))
                let original = try await fixture.loader.data(for: url)
                clock.advance(by: 5)
                #expect(try await source(fixture, url) == .memory)
                #expect(server.stats.value.requests == 1)

                clock.advance(by: 6)  // stale by max-age, still in memory
                let revalidated = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(revalidated.source == .revalidated)
                #expect(revalidated.data == original)
                #expect(server.stats.value.requests == 2)
                #expect(server.stats.value.conditionalRequests == 1)
                #expect(server.stats.value.notModified == 1)

                // The 304 refreshed the memory copy's freshness too.
                clock.advance(by: 9)
                let refreshed = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(refreshed.source == .memory)
                #expect(HTTPFreshness.isFresh(refreshed.metadata, at: clock.date))
                #expect(server.stats.value.requests == 2)
                #expect(fixture.loader.statistics.memoryHits == 2)
            }
        }
    }

    @Test func noStoreBodiesAreNotKeptInMemoryEither() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.cachePolicy = .http }
                server.set("/secret", .init(size: 300, seed: 9, cacheControl: "no-store"))
                _ = try await fixture.loader.data(for: server.url("/secret"))
                #expect(fixture.loader.memory.totalCount == 0)
                #expect(try await source(fixture, server.url("/secret")) == .network)
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    /// Reads, reloads and decoded reads of one URL race while its body changes: afterwards,
    /// neither memory tier holds anything but what the disk holds.
    @Test func memoryTiersNeverKeepBytesOlderThanDiskUnderConcurrentReloads() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/racy")
                let key = url.absoluteString
                let strings = fixture.loader.values(codec: .string)
                for round in 0..<25 {
                    server.set("/racy", .init(fixedBody: Data("version \(round)".utf8)))
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for reader in 0..<6 {
                            group.addTask {
                                if reader == 0 {
                                    _ = try await fixture.loader.data(for: url, cachePolicy: .reload)
                                } else if reader.isMultiple(of: 2) {
                                    _ = try await strings.value(for: url)
                                } else {
                                    _ = try await fixture.loader.data(for: url)
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    let onDisk = try #require(try await fixture.cache.data(forKey: key))
                    #expect(onDisk == Data("version \(round)".utf8))
                    if let body = fixture.loader.memory.value(forKey: CacheKey(key)) { #expect(body.data == onDisk) }
                    if let value = strings.cache.memory.value(forKey: CacheKey(key)) {
                        #expect(value == String(decoding: onDisk, as: UTF8.self))
                    }
                }
                #expect(server.stats.value.requests >= 25)
                #expect(fixture.loader.versions.trackedKeyCount == 0)
            }
        }
    }

    // MARK: - Interleavings, forced

    @Test func reloadLandingBetweenADiskReadAndItsPromotionIsNotOverwrittenByTheOldBody() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let hook = InterleavingHook()
                let fixture = try Fixture(directory: directory) { $0.willKeepInMemory = hook.function }
                let url = server.url("/doc")
                server.set("/doc", .init(fixedBody: Data("old".utf8)))
                _ = try await fixture.loader.data(for: url)
                fixture.loader.memory.removeAll()
                server.set("/doc", .init(fixedBody: Data("new".utf8)))
                hook.arm { _ = try await fixture.loader.data(for: url, cachePolicy: .reload) }

                let read = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(read.source == .disk && read.data == Data("old".utf8))  // read before the reload
                #expect(hook.hasFired && hook.failure == nil)
                #expect(fixture.loader.memory.value(forKey: CacheKey(url.absoluteString))?.data == Data("new".utf8))
                let next = try await fixture.loader.response(for: ResourceRequest(url))
                #expect(next.source == .memory && next.data == Data("new".utf8))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func reloadLandingBeforeADecodedValueIsKeptDropsTheOldValue() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let hook = InterleavingHook()
                let fixture = try Fixture(directory: directory) { $0.willKeepInMemory = hook.function }
                let url = server.url("/note")
                let notes = fixture.loader.values(codec: .string)
                server.set("/note", .init(fixedBody: Data("old".utf8)))
                hook.arm {
                    server.set("/note", .init(fixedBody: Data("new".utf8)))
                    _ = try await fixture.loader.data(for: url, cachePolicy: .reload)
                }

                #expect(try await notes.valueAndSource(for: ResourceRequest(url)) == ("old", .network))
                #expect(hook.hasFired && hook.failure == nil)
                #expect(notes.cache.memory.value(forKey: CacheKey(url.absoluteString)) == nil)
                #expect(try await notes.valueAndSource(for: ResourceRequest(url)) == ("new", .disk))
                #expect(server.stats.value.requests == 2)
            }
        }
    }
}

/// Runs an action once, from the loader's `willKeepInMemory` hook, to force an interleaving.
private final class InterleavingHook: Sendable {
    private let action = LockedValue<(@Sendable () async throws -> Void)?>(nil)
    private let fired = LockedValue(false)
    private let error = LockedValue<(any Error)?>(nil)

    func arm(_ body: @escaping @Sendable () async throws -> Void) { action.withLock { $0 = body } }

    var hasFired: Bool { fired.withLock { $0 } }
    var failure: (any Error)? { error.withLock { $0 } }

    var function: @Sendable (String) async -> Void {
        { [action, fired, error] _ in
            let body = action.withLock { action in
                defer { action = nil }
                return action
            }
            guard let body else { return }
            fired.withLock { $0 = true }
            do { try await body() } catch let failure { error.withLock { $0 = failure } }
        }
    }
}
