import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A value type served as JSON by the test server.
private struct Photo: Codable, Hashable, Sendable {
    var id: Int
    var title: String
}

/// A JSON codec that counts how often it decoded, to show that values are decoded once.
private final class CountingJSONCodec: ValueCodec, Sendable {
    private let json = JSONCodec<Photo>()
    private let decodes = LockedValue(0)

    var decodeCount: Int { decodes.withLock { $0 } }

    func encode(_ value: Photo) throws -> Data { try json.encode(value) }

    func decode(_ data: Data) throws -> Photo {
        decodes.withLock { $0 += 1 }
        return try json.decode(data)
    }
}

/// Decoded values through `ValueLoader` and `ResourceLoader.value(for:codec:)`: memory holds
/// values, disk holds the bytes as received, and the network is asked only on a miss.
@Suite(.timeLimit(.minutes(5)))
struct ValueLoaderTests {
    /// Serves `photo` as JSON at `path` and returns the body.
    @discardableResult
    private func serve(
        _ photo: Photo, at path: String, on server: TestServer, etag: String? = nil, cacheControl: String? = nil
    ) throws -> Data {
        let body = try JSONEncoder().encode(photo)
        server.set(path, .init(etag: etag, cacheControl: cacheControl, fixedBody: body))
        return body
    }

    @Test func jsonValueIsDecodedOnceAndServedFromMemoryNextTime() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let photo = Photo(id: 42, title: "Lake at dawn")
                let body = try serve(photo, at: "/photos/42.json", on: server)
                let url = server.url("/photos/42.json")
                let codec = CountingJSONCodec()
                let photos = fixture.loader.values(codec: codec)

                let first = try await photos.valueAndSource(for: ResourceRequest(url))
                #expect(first.value == photo && first.source == .network)
                #expect(codec.decodeCount == 1)
                // The disk keeps the body as received, not a re-encoding.
                let stored = try await fixture.cache.data(forKey: url.absoluteString)
                #expect(stored == body)

                let second = try await photos.valueAndSource(for: ResourceRequest(url))
                #expect(second.value == photo && second.source == .memory)
                #expect(codec.decodeCount == 1)
                #expect(try await photos.value(for: url) == photo)
                #expect(codec.decodeCount == 1)
                #expect(server.stats.value.requests == 1)

                // A purge drops decoded values; the bytes on disk are decoded again, once.
                photos.cache.memory.removeAll()
                let fromDisk = try await photos.valueAndSource(for: ResourceRequest(url))
                #expect(fromDisk.value == photo && fromDisk.source == .disk)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)).source == .memory)
                #expect(codec.decodeCount == 2)
                #expect(server.stats.value.requests == 1)

                let statistics = fixture.loader.statistics
                #expect(statistics.memoryHits == 3)
                #expect(statistics.diskHits == 1)
                #expect(statistics.networkLoads == 1)
                #expect(photos.cache.statistics.memoryHits == 3)
                // Decoded values are not kept twice: the bodies tier stays empty.
                #expect(fixture.loader.memory.totalCount == 0)
                #expect(fixture.loader.versions.trackedKeyCount == 0)
            }
        }
    }

    @Test func loaderKeepsOneMemoryTierPerCodecTypeForValueForCodec() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let photo = Photo(id: 7, title: "Harbour")
                try serve(photo, at: "/p/7", on: server)
                let url = server.url("/p/7")
                let codec = CountingJSONCodec()

                #expect(try await fixture.loader.value(for: url, codec: codec) == photo)
                #expect(try await fixture.loader.value(for: url, codec: codec) == photo)
                #expect(try await fixture.loader.value(for: URLRequest(url: url), codec: codec) == photo)
                #expect(codec.decodeCount == 1)
                #expect(fixture.loader.statistics.memoryHits == 2)

                // Another codec type has its own tier: it decodes the stored bytes once.
                let plain = try await fixture.loader.value(for: url, codec: .json(Photo.self))
                #expect(plain == photo)
                #expect(fixture.loader.statistics.diskHits == 1)
                _ = try await fixture.loader.value(for: url, codec: .json(Photo.self))
                #expect(fixture.loader.statistics.memoryHits == 3)
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test func bodyThatFailsDecodingThrowsDecodingFailedAndIsNeverAHit() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/p/broken")
                server.set("/p/broken", .init(fixedBody: Data("<html>Oops</html>".utf8)))
                let photos = fixture.loader.values(codec: .json(Photo.self))

                let failure = await error { try await photos.value(for: url) }
                #expect(failure?.code == .decodingFailed)
                #expect(failure?.message.contains(url.absoluteString) == true)
                #expect(failure?.message.contains("removed from the cache") == true)
                #expect(try fixture.cache.totalCount == 0)
                #expect(photos.cache.memory.totalCount == 0)

                // Documented: nothing undecodable is cached, so the next call asks the server again.
                let again = await error { try await photos.value(for: url) }
                #expect(again?.code == .decodingFailed)
                #expect(server.stats.value.requests == 2)
                #expect(fixture.loader.statistics.decodingFailures == 2)

                // Once the server is fixed, the value loads and is then served from memory.
                let photo = Photo(id: 1, title: "Fixed")
                try serve(photo, at: "/p/broken", on: server)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .network))
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .memory))
                #expect(server.stats.value.requests == 3)
            }
        }
    }

    @Test func storedBytesThatNoLongerDecodeAreFetchedAgain() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/p/9")
                try await fixture.cache.store(Data("{\"legacy\":true}".utf8), forKey: url.absoluteString)
                let photo = Photo(id: 9, title: "New format")
                try serve(photo, at: "/p/9", on: server)
                let photos = fixture.loader.values(codec: .json(Photo.self))

                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .network))
                #expect(photos.cache.statistics.decodingFailures == 1)
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test func underHTTPAStaleDecodedValueIsRevalidatedNotServed() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let clock = TestClock()
                let fixture = try Fixture(directory: directory) { configuration in
                    configuration.cachePolicy = .http
                    configuration.clock = clock.function
                }
                let photo = Photo(id: 3, title: "Dunes")
                try serve(photo, at: "/p/3", on: server, etag: "\"d1\"", cacheControl: "max-age=10")
                let url = server.url("/p/3")
                let photos = fixture.loader.values(codec: .json(Photo.self))

                #expect(try await photos.valueAndSource(for: ResourceRequest(url)).source == .network)
                clock.advance(by: 5)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .memory))
                #expect(server.stats.value.requests == 1)

                clock.advance(by: 6)  // stale, still in memory
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .revalidated))
                #expect(server.stats.value.requests == 2)
                #expect(server.stats.value.notModified == 1)

                clock.advance(by: 9)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (photo, .memory))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func bytesReplacedByAnotherRequestReplaceTheDecodedValue() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let url = server.url("/p/5")
                let old = Photo(id: 5, title: "Old")
                try serve(old, at: "/p/5", on: server)
                let photos = fixture.loader.values(codec: .json(Photo.self))
                #expect(try await photos.value(for: url) == old)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)).source == .memory)

                let new = Photo(id: 5, title: "New")
                try serve(new, at: "/p/5", on: server)
                _ = try await fixture.loader.data(for: url, cachePolicy: .reload)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)) == (new, .disk))
                #expect(server.stats.value.requests == 2)
            }
        }
    }

    @Test func concurrentFirstRequestsShareOneDownload() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let photo = Photo(id: 8, title: "Crowd")
                try serve(photo, at: "/p/8", on: server)
                let url = server.url("/p/8")
                let photos = fixture.loader.values(codec: .json(Photo.self))
                try await withThrowingTaskGroup(of: Photo.self) { group in
                    for _ in 0..<20 { group.addTask { try await photos.value(for: url) } }
                    for try await value in group { #expect(value == photo) }
                }
                #expect(server.stats.value.requests == 1)
                #expect(try await photos.valueAndSource(for: ResourceRequest(url)).source == .memory)
                #expect(fixture.loader.versions.trackedKeyCount == 0)
            }
        }
    }
}
