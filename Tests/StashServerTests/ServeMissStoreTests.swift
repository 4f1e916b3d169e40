#if Serve
    import Foundation
    import StashServer
    import Testing

    /// When the client of a miss gets the end of its response: once the response is stored, in the
    /// memory tier or staged in the disk tier, so that a request that follows finds it; not later,
    /// behind a disk store that runs on a disk thread.
    @Suite(.serialized)
    struct ServeMissStoreTests {
        static func makeServer(
            origin: Origin, directory: URL, memoryLimit: Int, holdStore: (@Sendable (String) -> Void)? = nil
        ) throws -> ProxyServer {
            var configuration = ProxyServer.Configuration(origin: URL(string: origin.url)!)
            configuration.port = 0
            configuration.metricsPort = 0
            configuration.directory = directory
            configuration.memoryLimit = .bytes(memoryLimit)
            configuration.beforeDiskStore = holdStore
            return try ProxyServer(configuration: configuration)
        }

        /// A miss is stored in the disk tier on a disk thread.
        ///
        /// While that store is held up, the client still gets the whole response, because the
        /// memory tier kept it, and a second request is a memory hit; the disk store then
        /// completes (a new server on the same directory answers from disk).
        @Test func aMissTheMemoryTierKeptEndsWhileItsDiskStoreIsHeld() async throws {
            let origin = try await Origin.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let big = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            origin.set("/big", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: big))
            let held = HeldDiskRead(suffix: "/big")
            let server = try Self.makeServer(
                origin: origin, directory: directory, memoryLimit: 64 << 20, holdStore: held.hook)
            try await server.start()
            let port = try #require(server.port)
            let ended = Locked(false)
            let first = Task {
                defer { ended.withLock { $0 = true } }
                return try await RawHTTP.request(port: port, "/big")
            }
            #expect(await eventually { held.isHolding })
            // Held on its disk thread: the response ends all the same.
            let endedWhileHeld = await eventually { ended.withLock { $0 } }
            #expect(endedWhileHeld)
            if endedWhileHeld {
                let second = try await RawHTTP.request(port: port, "/big")
                #expect(second.status == 200 && second.body == big)
                #expect(origin.count("/big") == 1)
            }
            held.release()
            let response = try await first.value
            #expect(response.status == 200 && response.body == big)
            await server.shutdown()

            let reopened = try Self.makeServer(origin: origin, directory: directory, memoryLimit: 64 << 20)
            try await reopened.start()
            let fromDisk = try await RawHTTP.request(port: try #require(reopened.port), "/big")
            #expect(fromDisk.status == 200 && fromDisk.body == big)
            #expect(origin.count("/big") == 1)
            await reopened.shutdown()
            await origin.stop()
        }

        /// With a memory tier too small to keep the body, the client's response ends only after the
        /// disk store: while the store is held up the response has not ended, and a second request
        /// for the URL waits for the fill and is then answered from the disk tier, not the origin.
        @Test func aMissTheMemoryTierDidNotKeepEndsAfterItsDiskStore() async throws {
            let origin = try await Origin.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let big = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
            origin.set("/big", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: big))
            let held = HeldDiskRead(suffix: "/big")
            // 64 KiB: a body above 8 KiB never enters the memory tier.
            let server = try Self.makeServer(
                origin: origin, directory: directory, memoryLimit: 64 << 10, holdStore: held.hook)
            try await server.start()
            let port = try #require(server.port)
            let ended = Locked(false)
            let first = Task {
                defer { ended.withLock { $0 = true } }
                return try await RawHTTP.request(port: port, "/big")
            }
            #expect(await eventually { held.isHolding })
            // The store cannot end while it is held, so neither can the response.
            #expect(!ended.withLock { $0 })
            let second = Task { try await RawHTTP.request(port: port, "/big") }
            held.release()
            let responses = [try await first.value, try await second.value]
            #expect(responses.map(\.status) == [200, 200])
            #expect(responses.allSatisfy { $0.body == big })
            #expect(origin.count("/big") == 1)
            await server.shutdown()
            await origin.stop()
        }
    }
#endif
