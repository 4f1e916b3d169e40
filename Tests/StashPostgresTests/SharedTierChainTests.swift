#if Postgres
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres
    import Testing

    extension PostgresTests {
        @Suite struct SharedTierChainTests {
            let scratch = Scratch()

            /// A loader with a disk cache of its own in front of `shared`: one instance of a fleet.
            func instance(
                _ shared: PostgresSharedTier, writeMode: SharedTierWriteMode = .writeThrough, clock: TestClock? = nil
            )
                throws -> ResourceLoader
            {
                let disk = try DiskCache(directory: scratch.directory(), sizeLimit: .megabytes(50))
                var configuration = ResourceLoader.Configuration()
                configuration.sharedTier = shared
                configuration.sharedTierWriteMode = writeMode
                if let clock { configuration.clock = clock.closure }
                return ResourceLoader(cache: disk, configuration: configuration)
            }

            @Test func aSecondInstanceIsFilledFromTheSharedTierAndTheOriginServesEachPhotoOnce() async throws {
                let origin = try await Origin.start()
                let shared = try await Postgres.tier()
                defer { shared.shutdown() }
                let first = try instance(shared, writeMode: .writeBehind)
                let second = try instance(shared)
                for photo in 1...5 {
                    let response = try await first.response(for: ResourceRequest(origin.url(photo)))
                    #expect(response.source == .network)
                    #expect(response.data == Origin.body(photo))
                }
                await first.waitForSharedTierWrites()
                for photo in 1...5 {
                    let response = try await second.response(for: ResourceRequest(origin.url(photo)))
                    #expect(response.source == .shared)
                    #expect(response.data == Origin.body(photo))
                    #expect(response.metadata.etag == "\"v\(photo)\"")
                    #expect(response.metadata.contentType == "image/jpeg")
                }
                // Now local to the second instance: the disk cache serves it, not PostgreSQL.
                second.memory.removeAll()
                #expect(try await second.response(for: ResourceRequest(origin.url(3))).source == .disk)
                #expect(origin.requests == 5)
                let (firstShared, secondShared) = (first.sharedTierStatistics, second.sharedTierStatistics)
                let firstCounts: [Int] = [
                    firstShared.hits, firstShared.misses, firstShared.writes, firstShared.failures,
                ]
                let secondCounts: [Int] = [
                    secondShared.hits, secondShared.misses, secondShared.writes, secondShared.failures,
                ]
                #expect(firstCounts == [0, 5, 5, 0])
                #expect(secondCounts == [5, 0, 0, 0])
                #expect(second.statistics.networkLoads == 0)
                await origin.stop()
            }

            @Test func aRevalidationRefreshesTheSharedCopysMetadata() async throws {
                let origin = try await Origin.start()
                origin.cacheControl.withLock { $0 = "max-age=60" }
                let shared = try await Postgres.tier()
                defer { shared.shutdown() }
                let clock = TestClock()
                let loader = try instance(shared, clock: clock)
                let url = origin.url(7)
                _ = try await loader.data(for: url, cachePolicy: .http)
                let before = try #require(try await shared.entry(forKey: url.absoluteString)).metadata
                clock.advance(by: 120)
                origin.cacheControl.withLock { $0 = "max-age=600" }
                let response = try await loader.response(for: ResourceRequest(url, cachePolicy: .http))
                #expect(response.source == .revalidated)
                let after = try #require(try await shared.entry(forKey: url.absoluteString)).metadata
                #expect(after != before)
                #expect(after == response.metadata)
                // Another instance, 2 minutes later, finds the shared copy fresh: no request at all.
                let other = try instance(shared, clock: clock)
                #expect(try await other.response(for: ResourceRequest(url, cachePolicy: .http)).source == .shared)
                #expect(origin.counts.withLock { $0["/photo/7"] } == 2)
                await origin.stop()
            }

            @Test func loadsKeepSucceedingFromTheOriginWhileTheDatabaseIsStoppedAndTheTierComesBack() async throws {
                let origin = try await Origin.start()
                let clock = TestClock()
                let shared = try await Postgres.tier {
                    $0.failureThreshold = 1
                    $0.cooldown = .seconds(30)
                    $0.operationTimeout = .seconds(1)
                    $0.clock = clock.closure
                }
                defer { shared.shutdown() }
                _ = try await instance(shared).data(for: origin.url(1))

                await Postgres.control("pause")
                let during = try instance(shared)
                for photo in 1...4 {
                    #expect(try await during.data(for: origin.url(photo)) == Origin.body(photo))
                }
                #expect(origin.requests == 5)
                #expect(shared.isCircuitOpen)
                #expect(shared.statistics.breakerOpenings == 1)
                // The first failure opened the breaker; the later lookups and writes were refused at once.
                #expect(during.sharedTierStatistics.failures == 8)
                #expect(shared.statistics.failures == 1)
                #expect(shared.statistics.refusedWhileOpen == 7)

                await Postgres.control("resume")
                var recovered = false
                for _ in 0..<40 where !recovered {
                    clock.advance(by: 31)
                    recovered = (try? await shared.containsEntry(forKey: origin.url(1).absoluteString)) == true
                    if !recovered { try await Task.sleep(for: .milliseconds(250)) }  // the pool reconnects
                }
                #expect(recovered)
                #expect(!shared.isCircuitOpen)
                #expect(shared.statistics.recoveries == 1)
                let after = try instance(shared)
                #expect(try await after.response(for: ResourceRequest(origin.url(1))).source == .shared)
                #expect(try await after.response(for: ResourceRequest(origin.url(2))).source == .network)
                #expect(origin.requests == 6)
                await origin.stop()
            }

            @Test func aCacheAsksTheSharedTierAfterBothLocalTiersMiss() async throws {
                let shared = try await Postgres.tier()
                defer { shared.shutdown() }
                let writer = Cache(
                    disk: try DiskCache(directory: scratch.directory()), codec: .string, sharedTier: shared,
                    sharedTierWriteMode: .writeThrough)
                let reader = Cache(
                    disk: try DiskCache(directory: scratch.directory()), codec: .string, sharedTier: shared)
                try await writer.store("hello, fleet", forKey: "greeting")
                #expect(try await reader.valueAndTier(forKey: "greeting")! == ("hello, fleet", .shared))
                #expect(try await reader.valueAndTier(forKey: "greeting")! == ("hello, fleet", .memory))
                reader.memory.removeAll()
                #expect(try await reader.valueAndTier(forKey: "greeting")! == ("hello, fleet", .disk))
                #expect(try await reader.value(forKey: "absent") == nil)
                let statistics = reader.statistics
                #expect(statistics.sharedHits == 1)
                #expect(statistics.misses == 1)
                #expect(statistics.hits == 3)

                try await writer.removeValue(forKey: "greeting")
                #expect(try await shared.entry(forKey: "greeting") == nil)
            }
        }
    }
#endif
