import Foundation
import Stash
import Testing

@testable import StashHTTP

/// Concurrent requests for one key share one transfer, which stops only when all are cancelled.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderCoalescingTests {
    /// Starts 50 tasks for one gated URL and returns once all of them wait for the one transfer.
    private func startFifty(_ fixture: Fixture, _ server: TestServer, path: String) async throws -> [ResourceTask] {
        let tasks = (0..<50).map { _ in fixture.loader.task(for: ResourceRequest(server.url(path))) }
        try await fixture.events.wait(for: 49) { $0.isCoalesced }
        try await server.stats.wait { $0.requests == 1 }
        return tasks
    }

    @Test func fiftyConcurrentRequestsForOneURLMakeOneRequest() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let gate = Gate()
                server.set("/shared", .init(size: 300_000, seed: 8, gate: gate))
                let tasks = try await startFifty(fixture, server, path: "/shared")
                gate.open()
                for task in tasks {
                    #expect(try await task.response.data == TestBody.bytes(300_000, seed: 8))
                }
                #expect(server.stats.value.requests == 1)
                #expect(fixture.loader.statistics.coalescedWaiters == 49)
                #expect(fixture.loader.statistics.requests == 1)
            }
        }
    }

    @Test func cancellingFortyNineWaitersKeepsTheTransfer() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let gate = Gate()
                server.set("/shared", .init(size: 300_000, seed: 8, gate: gate))
                let tasks = try await startFifty(fixture, server, path: "/shared")
                for task in tasks.dropLast() { task.cancel() }
                // Each cancelled request returns at once, while the response is still held.
                for task in tasks.dropLast() {
                    #expect(await error { try await task.response }?.code == .cancelled)
                }
                #expect(server.stats.value.ended == 0)
                gate.open()
                #expect(try await tasks.last!.response.data == TestBody.bytes(300_000, seed: 8))
                let stats = server.stats.value
                #expect(stats.requests == 1)
                #expect(stats.completed == 1)
                #expect(stats.aborted == 0)
                #expect(try await fixture.cache.containsData(forKey: server.url("/shared").absoluteString))
            }
        }
    }

    @Test func cancellingAllFiftyWaitersStopsTheTransfer() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let gate = Gate()
                // Larger than the socket buffers, so that the server notices the closed connection.
                server.set("/shared", .init(size: 16 << 20, seed: 8, gate: gate))
                let tasks = try await startFifty(fixture, server, path: "/shared")
                for task in tasks { task.cancel() }
                for task in tasks {
                    #expect(await error { try await task.response }?.code == .cancelled)
                }
                try await fixture.events.wait(for: 1) { $0.outcome == .cancelled }
                #expect(fixture.downloads.isEmpty)
                gate.open()
                try await server.stats.wait { $0.ended == 1 }
                let stats = server.stats.value
                #expect(stats.requests == 1)
                #expect(stats.aborted == 1)
                #expect(stats.completed == 0)
                #expect(stats.bodyBytesSent < 16 << 20)
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.loader.statistics.cancelledTransfers == 1)
                #expect(fixture.downloads.isEmpty)
            }
        }
    }

    @Test func aCancelledCallerOfDataReturnsAtOnceWhileOthersStillGetTheBody() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let gate = Gate()
                server.set("/shared", .init(size: 1000, seed: 2, gate: gate))
                let url = server.url("/shared")
                let first = Task { try await fixture.loader.data(for: url) }
                let second = Task { try await fixture.loader.data(for: url) }
                try await fixture.events.wait(for: 1) { $0.isCoalesced }
                first.cancel()
                #expect(await error { try await first.value }?.code == .cancelled)
                gate.open()
                #expect(try await second.value == TestBody.bytes(1000, seed: 2))
                #expect(server.stats.value.requests == 1)
            }
        }
    }
}
