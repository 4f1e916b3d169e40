import Foundation
import Stash
import Testing

@testable import StashHTTP

/// The concurrency limit, priorities, suspend / resume and cancel-all.
@Suite(.timeLimit(.minutes(5)))
struct ResourceLoaderSchedulingTests {
    @Test func neverRunsMoreTransfersThanTheConcurrencyLimit() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.maximumConcurrentTransfers = 3 }
                let gate = Gate()
                for index in 0..<12 {
                    server.set("/limited/\(index)", .init(size: 40_000, seed: UInt64(index), gate: gate))
                }
                let tasks = (0..<12).map { fixture.loader.task(for: ResourceRequest(server.url("/limited/\($0)"))) }
                try await server.stats.wait { $0.inFlight == 3 }
                try await fixture.events.wait(for: 9) { $0.isQueued }
                #expect(server.stats.value.requests == 3)
                gate.open()
                for (index, task) in tasks.enumerated() {
                    #expect(try await task.response.data == TestBody.bytes(40_000, seed: UInt64(index)))
                }
                #expect(server.stats.value.requests == 12)
                #expect(server.stats.value.maxInFlight == 3)
            }
        }
    }

    @Test func suspendHoldsNewTransfersUntilResume() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                let gate = Gate()
                server.set("/running", .init(size: 1000, seed: 1, gate: gate))
                let running = fixture.loader.task(for: ResourceRequest(server.url("/running")))
                try await server.stats.wait { $0.requests == 1 }

                fixture.loader.suspend()
                #expect(fixture.loader.isSuspended)
                let held = (0..<3).map { fixture.loader.task(for: ResourceRequest(server.url("/held/\($0)/100"))) }
                try await fixture.events.wait(for: 3) { $0.isQueued }
                // A transfer that was running goes on while suspended.
                gate.open()
                #expect(try await running.response.data == TestBody.bytes(1000, seed: 1))
                #expect(server.stats.value.requests == 1)

                fixture.loader.resume()
                for task in held { #expect(try await task.response.data?.count == 100) }
                #expect(server.stats.value.requests == 4)
            }
        }
    }

    @Test func raisedPriorityJumpsTheQueue() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.maximumConcurrentTransfers = 1 }
                let gate = Gate()
                server.set("/first", .init(size: 10, seed: 1, gate: gate))
                let first = fixture.loader.task(for: ResourceRequest(server.url("/first")))
                try await server.stats.wait { $0.requests == 1 }
                var queued: [String: ResourceTask] = [:]
                for (index, name) in ["a", "b", "c", "d"].enumerated() {
                    queued[name] = fixture.loader.task(for: ResourceRequest(server.url("/\(name)/10")))
                    try await fixture.events.wait(for: index + 1) { $0.isQueued }
                }
                queued["d"]!.priority = .high
                queued["b"]!.priority = .low
                #expect(queued["d"]!.priority == .high)
                gate.open()
                _ = try await first.response
                for task in queued.values { _ = try await task.response }
                #expect(server.stats.value.order == ["/first", "/d/10", "/a/10", "/c/10", "/b/10"])
            }
        }
    }

    @Test func sharedTransferRunsAtTheHighestPriorityOfItsWaiters() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.maximumConcurrentTransfers = 1 }
                let gate = Gate()
                server.set("/first", .init(size: 10, seed: 1, gate: gate))
                let first = fixture.loader.task(for: ResourceRequest(server.url("/first")))
                try await server.stats.wait { $0.requests == 1 }
                let normal = fixture.loader.task(for: ResourceRequest(server.url("/normal/10")))
                try await fixture.events.wait(for: 1) { $0.isQueued }
                let low = fixture.loader.task(for: ResourceRequest(server.url("/shared/10"), priority: .low))
                try await fixture.events.wait(for: 2) { $0.isQueued }
                let joiner = fixture.loader.task(for: ResourceRequest(server.url("/shared/10"), priority: .veryHigh))
                try await fixture.events.wait(for: 1) { $0.isCoalesced }
                gate.open()
                for task in [first, normal, low, joiner] { _ = try await task.response }
                #expect(server.stats.value.order == ["/first", "/shared/10", "/normal/10"])
            }
        }
    }

    @Test func cancelAllCancelsQueuedAndRunningTransfers() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory) { $0.maximumConcurrentTransfers = 1 }
                let gate = Gate()
                server.set("/running", .init(size: 4 << 20, seed: 1, gate: gate))
                let running = fixture.loader.task(for: ResourceRequest(server.url("/running")))
                try await server.stats.wait { $0.requests == 1 }
                let queued = (0..<2).map { fixture.loader.task(for: ResourceRequest(server.url("/queued/\($0)/10"))) }
                try await fixture.events.wait(for: 2) { $0.isQueued }

                fixture.loader.cancelAll()
                for task in [running] + queued {
                    #expect(await error { try await task.response }?.code == .cancelled)
                }
                try await fixture.events.wait(for: 3) { $0.outcome == .cancelled }
                gate.open()
                #expect(
                    server.stats.value.requests == 1,
                    "requests: \(server.stats.value.order); events: \(fixture.events.events.value)")
                #expect(try fixture.cache.totalCount == 0)
                #expect(fixture.downloads.isEmpty)
                // The loader stays usable.
                #expect(try await fixture.loader.data(for: server.url("/queued/0/10")).count == 10)
                #expect(server.stats.value.requests == 2)
            }
        }
    }
}
