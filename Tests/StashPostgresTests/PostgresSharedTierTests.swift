#if Postgres
    import Foundation
    import Stash
    import StashPostgres
    import Testing

    /// Every PostgreSQL test, one at a time: one of them stops the server mid-run.
    @Suite(.serialized, Postgres.required)
    struct PostgresTests {}

    extension PostgresTests {
        @Suite struct PostgresSharedTierTests {
            @Test func roundTripsSmallAndChunkedLargeBodiesWithTheirMetadata() async throws {
                let tier = try await Postgres.tier { $0.chunkSize = .bytes(64 * 1024) }
                defer { tier.shutdown() }
                let metadata = DiskCache.Metadata(
                    contentType: "image/jpeg", etag: "\"v1\"", lastModified: "Tue, 01 Jul 2025 10:00:00 GMT",
                    extra: ["cache-control": "max-age=60", "quote": "it's; DROP TABLE x --"])
                let small = SharedEntry(
                    key: "photo-1'; DROP TABLE stash --", body: Data("tiny".utf8), metadata: metadata)
                let large = SharedEntry(
                    key: "photo-2 café", body: testBytes(300 * 1024 + 7, seed: 2), metadata: metadata)
                try await tier.store(small)
                try await tier.store(large)

                let readSmall = try #require(try await tier.entry(forKey: small.key))
                let readLarge = try #require(try await tier.entry(forKey: large.key))
                #expect(readSmall.body == small.body)
                #expect(readSmall.metadata == metadata)
                #expect(readLarge.body == large.body)
                #expect(readLarge.metadata == metadata)
                #expect(try await tier.entry(forKey: "photo-3") == nil)
                #expect(try await tier.containsEntry(forKey: large.key))
                #expect(try await tier.totals() == (size: 4 + 300 * 1024 + 7, count: 2))

                try await tier.store(SharedEntry(key: large.key, body: Data("replaced".utf8)))
                #expect(try await tier.entry(forKey: large.key)?.body == Data("replaced".utf8))
                try await tier.removeEntry(forKey: small.key)
                #expect(try await tier.entry(forKey: small.key) == nil)
                #expect(try await tier.containsEntry(forKey: small.key) == false)
                #expect(tier.statistics.hits == 3)
                #expect(tier.statistics.misses == 2)
                #expect(tier.statistics.damagedBodies == 0)
            }

            @Test func trimsTheOldestEntriesInOneBatchWhenOverTheSizeLimit() async throws {
                let tier = try await Postgres.tier { $0.sizeLimit = .bytes(10_000) }
                defer { tier.shutdown() }
                for index in 0..<12 {
                    try await tier.store(SharedEntry(key: "k\(index)", body: testBytes(1000, seed: UInt64(index))))
                }
                // The 11th store took the table to 11,000 bytes: the oldest were deleted down to 9,000
                // (k2…k10); the 12th brought it to exactly the limit, which is allowed.
                #expect(try await tier.totals() == (size: 10_000, count: 10))
                #expect(try await tier.entry(forKey: "k0") == nil)
                #expect(try await tier.entry(forKey: "k1") == nil)
                #expect(try await tier.entry(forKey: "k2")?.body == testBytes(1000, seed: 2))
                #expect(try await tier.entry(forKey: "k11")?.body == testBytes(1000, seed: 11))
                #expect(tier.statistics.trimmedEntries == 2)
            }

            @Test func refusesABodyLargerThanTheLimit() async throws {
                let tier = try await Postgres.tier { $0.sizeLimit = .bytes(1000) }
                defer { tier.shutdown() }
                let error = await #expect(throws: StashError.self) {
                    try await tier.store(SharedEntry(key: "big", body: Data(count: 1001)))
                }
                #expect(error?.code == .tooLarge)
                #expect(try await tier.totals() == (size: 0, count: 0))
            }

            @Test func expiresEntriesAfterTheirTimeToLive() async throws {
                let clock = TestClock()
                let tier = try await Postgres.tier {
                    $0.defaultTimeToLive = .seconds(60)
                    $0.clock = clock.closure
                }
                defer { tier.shutdown() }
                try await tier.store(SharedEntry(key: "default-ttl", body: Data("a".utf8)))
                try await tier.store(
                    SharedEntry(key: "own-expiry", body: Data("b".utf8), expires: clock.date.addingTimeInterval(120)))
                clock.advance(by: 59)
                #expect(try await tier.entry(forKey: "default-ttl")?.body == Data("a".utf8))
                clock.advance(by: 2)
                #expect(try await tier.entry(forKey: "default-ttl") == nil)
                #expect(try await tier.containsEntry(forKey: "default-ttl") == false)
                #expect(try await tier.entry(forKey: "own-expiry")?.body == Data("b".utf8))
                #expect(try await tier.trim() == 1)
                #expect(try await tier.totals() == (size: 1, count: 1))
            }

            @Test(arguments: [
                ("http://stash@127.0.0.1:5432/stash", "the scheme is 'http'"),
                ("postgres://127.0.0.1:5432/stash", "it has no user name"),
                ("postgres://stash@127.0.0.1:5432/", "it names no database"),
                ("postgres://stash@:5432/stash", "it has no host"),
                ("not a url", "it is not a URL"),
            ])
            func rejectsAMalformedURLAtConstruction(url: String, problem: String) async throws {
                let error = await #expect(throws: StashError.self) { _ = try await PostgresSharedTier(url: url) }
                #expect(error?.code == .invalidArgument)
                #expect(error?.message.contains(problem) == true)
            }

            @Test func rejectsAWrongPasswordAndAMissingDatabaseAtConstructionWithoutShowingThePassword() async throws {
                let wrong = await #expect(throws: StashError.self) {
                    _ = try await PostgresSharedTier(url: Postgres.url(password: "not-the-password"))
                }
                #expect(wrong?.code == .invalidArgument)
                #expect(wrong?.message.contains("28P01") == true)
                #expect(wrong?.message.contains("check the user name and password") == true)
                #expect(wrong?.message.contains("not-the-password") == false)

                let missing = await #expect(throws: StashError.self) {
                    _ = try await PostgresSharedTier(url: Postgres.url(database: "no_such_database"))
                }
                #expect(missing?.code == .invalidArgument)
                #expect(missing?.message.contains("3D000") == true)

                let table = await #expect(throws: StashError.self) {
                    _ = try await PostgresSharedTier(
                        url: Postgres.url!, configuration: .init(table: "entries; DROP TABLE x"))
                }
                #expect(table?.code == .invalidArgument)
            }

            @Test func startsWithItsBreakerOpenWhenNothingListensAndFailsFast() async throws {
                let clock = TestClock()
                let tier = try await PostgresSharedTier(
                    url: Postgres.url(port: 1),
                    configuration: .init(table: Postgres.uniqueTable(), clock: clock.closure))
                defer { tier.shutdown() }
                #expect(tier.isCircuitOpen)
                let start = ContinuousClock.now
                let error = await #expect(throws: StashError.self) { _ = try await tier.entry(forKey: "k") }
                #expect(error?.code == .transport)
                #expect(ContinuousClock.now - start < .milliseconds(100))
                #expect(tier.statistics.refusedWhileOpen == 1)
                #expect(tier.statistics.breakerOpenings == 1)
            }

            @Test func keepsEveryBodyWholeWhenTwoProcessesWriteTheSameKeys() async throws {
                let table = Postgres.uniqueTable()
                let tier = try await PostgresSharedTier(
                    url: Postgres.url!, configuration: .init(table: table, chunkSize: .bytes(16 * 1024)))
                defer { tier.shutdown() }
                async let first = Worker.run(["write", Postgres.url!, table, "1", "40"])
                async let second = Worker.run(["write", Postgres.url!, table, "2", "40"])
                let results = try await [first, second]
                #expect(results.map(\.status) == [0, 0])
                for index in 0..<40 {
                    let body = try #require(try await tier.entry(forKey: "shared-\(index)")).body
                    let candidates = [1, 2].map { testBytes(40_000 + index * 997, seed: UInt64($0 * 1000 + index)) }
                    #expect(candidates.contains(body), "key shared-\(index) holds neither writer's body")
                }
                #expect(try await tier.totals().count == 40)
                #expect(tier.statistics.damagedBodies == 0)
            }
        }
    }
#endif
