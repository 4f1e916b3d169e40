import Foundation
import Stash
import StashHTTP
import Testing

/// The default policy (`.adaptive`) may turn a large newcomer away at the very store that writes
/// it; what each kind of request gets then.
@Suite struct ResourceLoaderAdmissionTests {
    /// A 1 MB cache full of 20 KB bodies each requested three times, and a body of 995 000 bytes:
    /// larger than the window at any share (at most 99 %), and worth far less per byte.
    private func fillWithPopularBodies(_ fixture: Fixture, _ server: TestServer) async throws {
        for _ in 0..<3 {
            for i in 0..<45 { _ = try await fixture.loader.data(for: server.url("/small/\(i)/20000")) }
        }
        #expect(server.stats.value.requests == 45)
    }

    /// A request for data gets the body it waited for (from the download, not a second one),
    /// and the cache keeps its popular entries instead.
    @Test func aLargeBodyTurnedAwayIsStillDeliveredAsData() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory, sizeLimit: .bytes(1_000_000))
                try await fillWithPopularBodies(fixture, server)
                let url = server.url("/big/995000")

                let data = try await fixture.loader.data(for: url)

                #expect(data == TestBody.bytes(995_000, seed: TestBody.seed(for: "/big/995000")))
                #expect(server.stats.value.requests == 46)
                try await fixture.cache.flush()  // the admission contest runs when the store commits
                #expect(try await !fixture.cache.containsData(forKey: url.absoluteString))
                #expect(try await fixture.cache.containsData(forKey: server.url("/small/0/20000").absoluteString))
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    /// A request for the cache's file needs the entry: it stays through its store whatever
    /// the admission contest says, with one download (it took two and then failed when the
    /// contest applied to it).
    @Test func aLargeBodyRequestedAsAFileIsKept() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory, sizeLimit: .bytes(1_000_000))
                try await fillWithPopularBodies(fixture, server)
                let path = "/big/995000"

                let file = try await fixture.loader.fileURL(for: server.url(path))

                #expect(try TestBody.fileMatches(file, size: 995_000, seed: TestBody.seed(for: path)))
                #expect(server.stats.value.requests == 46)
                #expect(try await fixture.cache.containsData(forKey: server.url(path).absoluteString))
                #expect(try fixture.cache.totalSize.bytes <= 1_000_000)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }
}
