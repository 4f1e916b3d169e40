#if Serve
    import Foundation
    import StashServer
    import Testing

    /// Bodies above 128 KiB (the mmap threshold) with a disk tier: kept in the memory tier while it
    /// has free room (a working set that fits is served from memory), never at the cost of what it
    /// holds (a full memory tier sends them from the disk tier's file).
    @Suite(.serialized)
    struct ServeLargeBodyMemoryTests {
        static func hits(_ server: ProxyServer, tier: String) async throws -> Int {
            let metrics = try await RawHTTP.request(port: try #require(server.metricsPort), "/metrics")
            let prefix = "stash_serve_hits_total{tier=\"\(tier)\"} "
            let line = metrics.text.split(separator: "\n").first { $0.hasPrefix(prefix) }
            return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
        }

        static func body(_ seed: Int, count: Int) -> Data {
            Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
        }

        /// With free room, a 300,000-byte body is answered from memory after its miss, and after a
        /// restart from memory after its first disk hit (the promotion into free room).
        @Test func aLargeBodyIsKeptInFreeRoom() async throws {
            let origin = try await Origin.start()
            let directory = ServeDiskHitTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let large = Self.body(1, count: 300_000)
            origin.set("/large", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: large))

            let first = try ServeDiskHitTests.makeServer(origin: origin, directory: directory, memoryLimit: 16 << 20)
            try await first.start()
            #expect(try await RawHTTP.request(port: first.port!, "/large").body == large)
            #expect(try await RawHTTP.request(port: first.port!, "/large").body == large)
            #expect(try await Self.hits(first, tier: "memory") == 1)
            #expect(try await Self.hits(first, tier: "disk") == 0)
            await first.shutdown()

            let second = try ServeDiskHitTests.makeServer(origin: origin, directory: directory, memoryLimit: 16 << 20)
            try await second.start()
            for _ in 0..<3 { #expect(try await RawHTTP.request(port: second.port!, "/large").body == large) }
            #expect(try await Self.hits(second, tier: "disk") == 1)
            #expect(try await Self.hits(second, tier: "memory") == 2)
            #expect(origin.count("/large") == 1)
            await second.shutdown()
            await origin.stop()
        }

        /// A memory tier filled with smaller bodies evicts none of them for a large one: the large
        /// body's hits come from the disk tier, and the small ones are still memory hits.
        @Test func aFullMemoryTierEvictsNothingForALargeBody() async throws {
            let origin = try await Origin.start()
            let directory = ServeDiskHitTests.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // 2 MiB: bodies up to 256 KiB may be kept. 120 bodies of 60,000 bytes fill every shard
            // of the memory tier, leaving less free room than a body of 200,000 needs.
            let smallCount = 120
            for index in 0..<smallCount {
                origin.set(
                    "/small\(index)",
                    Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: Self.body(index, count: 60_000)))
            }
            let large = Self.body(999, count: 200_000)
            origin.set("/large", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: large))
            let server = try ServeDiskHitTests.makeServer(origin: origin, directory: directory, memoryLimit: 2 << 20)
            try await server.start()
            let port = server.port!
            for index in 0..<smallCount { _ = try await RawHTTP.request(port: port, "/small\(index)") }
            // The small bodies memory holds: answered again from memory, until a pass over them is
            // all memory hits (a disk hit of another one may be promoted in between).
            var held = Array(0..<smallCount)
            for _ in 0..<6 {
                var stillHeld: [Int] = []
                for index in held {
                    let before = try await Self.hits(server, tier: "memory")
                    _ = try await RawHTTP.request(port: port, "/small\(index)")
                    if try await Self.hits(server, tier: "memory") == before + 1 { stillHeld.append(index) }
                }
                if stillHeld == held { break }
                held = stillHeld
            }
            #expect(held.count >= 4, "memory held \(held)")

            #expect(try await RawHTTP.request(port: port, "/large").body == large)
            let disk = try await Self.hits(server, tier: "disk")
            #expect(try await RawHTTP.request(port: port, "/large").body == large)
            #expect(try await Self.hits(server, tier: "disk") == disk + 1)
            let memory = try await Self.hits(server, tier: "memory")
            for index in held { _ = try await RawHTTP.request(port: port, "/small\(index)") }
            #expect(try await Self.hits(server, tier: "memory") == memory + held.count)
            #expect(origin.count("/large") == 1)
            await server.shutdown()
            await origin.stop()
        }
    }
#endif
