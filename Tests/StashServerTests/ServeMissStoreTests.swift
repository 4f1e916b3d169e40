#if Serve
    import Foundation
    import StashServer
    import Testing

    /// When the client of a miss gets the end of its response: once the response is kept in the
    /// memory tier (when it fits), not later, behind a disk store that runs on a disk thread; a
    /// request that follows finds it in the memory tier, or waits for the fill, which ends with
    /// the disk store.
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

        static func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
        }

        /// A `GET` of `target` on a task of its own, with whether its response has ended.
        static func request(
            _ target: String, port: Int
        ) -> (response: Task<RawHTTP.Response, any Error>, ended: Locked<Bool>) {
            let ended = Locked(false)
            let response = Task {
                defer { ended.withLock { $0 = true } }
                return try await RawHTTP.request(port: port, target)
            }
            return (response, ended)
        }

        /// A miss is stored in the disk tier on a disk thread.
        ///
        /// While that store is held up, the client still gets the whole response, because the
        /// memory tier kept it, and a second request is a memory hit; the disk store then
        /// completes (a new server on the same directory answers from disk).
        @Test func aMissTheMemoryTierKeptEndsWhileItsDiskStoreIsHeld() async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let big = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            origin.set("/big", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: big))
            let held = HeldDiskRead(suffix: "/big")
            let server = try Self.makeServer(
                origin: origin, directory: directory, memoryLimit: 64 << 20, holdStore: held.hook)
            try await server.start()
            let port = try #require(server.port)
            let (first, ended) = Self.request("/big", port: port)
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

        /// Clients get their responses ahead of their disk stores only while the bodies waiting so
        /// hold at most 8 MiB (`ResponseStore.earlyEndLimit`): past that, a client waits for its
        /// store, so that misses cannot outrun the disk threads and pile bodies up in memory.
        ///
        /// Bodies the memory tier keeps (100,000 bytes in 64 MiB: 83 fit in 8 MiB), and bodies
        /// above 128 KiB in a 2 MiB memory tier, which keeps about nine and then has no room
        /// (200,000 bytes: 41 fit), so that most of the 8 MiB is bodies held only for their store.
        @Test(arguments: [(memoryLimit: 64 << 20, bodySize: 100_000), (memoryLimit: 2 << 20, bodySize: 200_000)])
        func clientsGoAheadOfTheirDiskStoresOnlyWithin8MiB(memoryLimit: Int, bodySize: Int) async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let body = Data(repeating: 7, count: bodySize)
            let fitting = (8 << 20) / bodySize
            for i in 0...fitting {
                origin.set("/b/\(i)", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: body))
            }
            // Every disk store waits here until the test lets them all go.
            let gate = DispatchSemaphore(value: 0)
            let server = try Self.makeServer(
                origin: origin, directory: directory, memoryLimit: memoryLimit, holdStore: { _ in gate.wait() })
            try await server.start()
            let port = try #require(server.port)
            // The bodies that fit in 8 MiB: each client gets its response while every store is held.
            var allEnded = true
            for i in 0..<fitting where allEnded {
                let (response, ended) = Self.request("/b/\(i)", port: port)
                allEnded = await eventually { ended.withLock { $0 } }
                #expect(allEnded, "the client of /b/\(i) waited for its disk store")
                if allEnded {
                    let response = try await response.value
                    #expect(response.status == 200 && response.body == body)
                }
            }
            let (last, ended) = Self.request("/b/\(fitting)", port: port)
            #expect(await eventually { origin.count("/b/\(fitting)") == 1 })
            // The next would take them past 8 MiB: its client waits for its store.
            #expect(await !eventually(within: 1) { ended.withLock { $0 } })
            for _ in 0...fitting { gate.signal() }
            let response = try await last.value
            #expect(response.status == 200 && response.body == body)
            await server.shutdown()
            await origin.stop()
        }

        /// A body the memory tier has no room for still ends while its disk store is held up.
        ///
        /// A second request for the URL then misses the memory tier and finds the fill still open
        /// (it ends with the store): it waits for it, and is answered from the disk tier once the
        /// store ends, not by the origin.
        @Test func aMissTheMemoryTierDidNotKeepEndsWhileItsDiskStoreIsHeldAndAFollowerWaitsForIt() async throws {
            let origin = try await Origin.start()
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            // 2 MiB: bodies up to 256 KiB are collected in memory; one above 128 KiB enters the
            // memory tier only while it has room, which ten others of 200,000 bytes take first.
            let body = { (seed: Int) in Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* seed) }) }
            for i in 0..<10 {
                origin.set("/fill/\(i)", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: body(i + 3)))
            }
            let big = body(11)
            origin.set("/big", Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: big))
            let held = HeldDiskRead(suffix: "/big")
            let server = try Self.makeServer(
                origin: origin, directory: directory, memoryLimit: 2 << 20, holdStore: held.hook)
            try await server.start()
            let port = try #require(server.port)
            for i in 0..<10 { _ = try await RawHTTP.request(port: port, "/fill/\(i)") }
            let (first, firstEnded) = Self.request("/big", port: port)
            #expect(await eventually { held.isHolding })
            #expect(await eventually { firstEnded.withLock { $0 } })
            // The follower: the fill cannot end while its store is held, so neither can this (a
            // body the memory tier kept would be a memory hit here).
            let (second, secondEnded) = Self.request("/big", port: port)
            #expect(await !eventually(within: 1) { secondEnded.withLock { $0 } })
            #expect(origin.count("/big") == 1)
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
