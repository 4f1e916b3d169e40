#if Postgres
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres
    import Testing

    extension PostgresTests {
        /// Large bodies stream through the shared tier chunk by chunk, and a damaged one is a miss.
        @Suite struct SharedTierStreamingTests {
            let scratch = Scratch()

            /// Round-trips 24 MiB (24 chunk rows) in a child process and samples its resident memory on
            /// every chunk (VmRSS) and the kernel's peak (VmHWM), against its baseline after a warm-up.
            @Test func aLargeBodyRoundTripsChunkByChunkWithBoundedMemory() async throws {
                #if os(Linux)
                    let size = 24 << 20
                    let tier = try await Postgres.tier()  // creates the table; the worker reuses it
                    defer { tier.shutdown() }
                    let run = try await Worker.run([
                        "stream", Postgres.url!, tier.configuration.table, "\(size)", scratch.directory().path,
                    ])
                    #expect(run.status == 0, "\(run.output)")
                    print("24 MiB streamed round trip, memory in KiB: \(run.output)")
                    let fields = Self.fields(run.output)
                    #expect(fields["size"] == "\(size)")
                    #expect(fields["head"] == "\(size)")
                    #expect(fields["match"] == "true")
                    #expect(fields["damaged"] == "0")
                    #expect(try #require(fields["samples"].flatMap { Int($0) }) >= 48)
                    let baseline = try #require(fields["baselineKB"].flatMap { Int($0) })
                    let peak = try #require(fields["peakKB"].flatMap { Int($0) })
                    let hwmAfter = try #require(fields["hwmAfterKB"].flatMap { Int($0) })
                    // The body is 24,576 KiB. A read holds one chunk row (1 MiB) plus NIO's receive
                    // buffers; a store one row being regrouped plus the one being sent. Measured: about
                    // 5 MiB (debug build). Holding the body whole would add at least 24 MiB; the bound
                    // is a third of it.
                    // A sanitizer's shadow memory and quarantine grow with every allocation.
                    if !BuildProducts.isSanitized {
                        #expect(peak - baseline < 8 * 1024)
                        #expect(hwmAfter - baseline < 8 * 1024)
                    }
                    #expect(try await tier.totals() == (size: size + 3 << 20, count: 2))
                #endif
            }

            @Test func aCorruptedOrTornChunkIsAMissAndNeverServed() async throws {
                let tier = try await Postgres.tier { $0.chunkSize = .bytes(64 * 1024) }
                defer { tier.shutdown() }
                let body = testBytes(300 * 1024 + 5, seed: 9)  // the entry's row + 4 chunk rows
                let file = scratch.directory()
                try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
                let input = file.appendingPathComponent("body")
                try body.write(to: input)
                let metadata = DiskCache.Metadata(contentType: "image/png", etag: "\"e\"")
                try await tier.store(
                    SharedEntryHead(key: "a", size: body.count, metadata: metadata), bodyFromFileAt: input)
                try await tier.store(
                    SharedEntryHead(key: "b", size: body.count, metadata: metadata), bodyFromFileAt: input)

                let intact = CollectingSink()
                let head = try await tier.streamEntry(forKey: "a", into: intact)
                #expect(head?.size == body.count)
                #expect(head?.metadata == metadata)
                #expect(intact.received == body)
                #expect(intact.chunkCount == 5)
                #expect(try await tier.entry(forKey: "a")?.body == body)  // the Data API reads it too

                // One flipped byte in a chunk row of "a"; a chunk row of "b" gone (a torn write).
                let table = tier.configuration.table
                try await Postgres.execute(
                    """
                    UPDATE \(table)_chunks SET data = set_byte(data, 7, (get_byte(data, 7) + 1) % 256)
                    WHERE seq = 2 AND entry_id = (SELECT id FROM \(table) WHERE key = 'a')
                    """)
                try await Postgres.execute(
                    "DELETE FROM \(table)_chunks WHERE seq = 1 AND entry_id = (SELECT id FROM \(table) WHERE key = 'b')"
                )
                let corrupted = CollectingSink()
                #expect(try await tier.streamEntry(forKey: "a", into: corrupted) == nil)
                #expect(try await tier.streamEntry(forKey: "b", into: CollectingSink()) == nil)
                #expect(try await tier.entry(forKey: "a") == nil)
                #expect(try await tier.entry(forKey: "b") == nil)
                #expect(tier.statistics.damagedBodies == 4)
                #expect(tier.statistics.failures == 0)
                #expect(!tier.isCircuitOpen)
            }

            @Test func aStreamedStoreWhoseBodyDoesNotMatchItsHeadStoresNothing() async throws {
                let tier = try await Postgres.tier { $0.chunkSize = .bytes(1000) }
                defer { tier.shutdown() }
                try await tier.store(SharedEntry(key: "k", body: Data("old".utf8)))
                let short = Chunks([testBytes(1500, seed: 1), testBytes(900, seed: 2)])
                let error = try await #require(throws: StashError.self) {
                    try await tier.store(SharedEntryHead(key: "k", size: 5000), body: short)
                }
                #expect(error.code == .invalidArgument)
                let long = Chunks([testBytes(3000, seed: 1), testBytes(3000, seed: 2)])
                let tooLong = try await #require(throws: StashError.self) {
                    try await tier.store(SharedEntryHead(key: "k", size: 5000), body: long)
                }
                #expect(tooLong.code == .invalidArgument)
                let failing = Chunks([testBytes(2500, seed: 1)], failure: StashError(.io, "disk gone"))
                let failed = try await #require(throws: StashError.self) {
                    try await tier.store(SharedEntryHead(key: "k", size: 5000), body: failing)
                }
                #expect(failed.code == .io)
                // Rolled back every time: the old entry is intact, and the database was never blamed.
                #expect(try await tier.entry(forKey: "k")?.body == Data("old".utf8))
                #expect(try await tier.totals() == (size: 3, count: 1))
                #expect(tier.statistics.failures == 0)

                // Chunks of odd lengths are regrouped into rows: 5000 bytes as 1000 + 4 rows.
                let odd = Chunks([testBytes(1, seed: 3), testBytes(2999, seed: 4), testBytes(2000, seed: 5)])
                try await tier.store(SharedEntryHead(key: "k", size: 5000), body: odd)
                let sink = CollectingSink()
                #expect(try await tier.streamEntry(forKey: "k", into: sink)?.size == 5000)
                #expect(sink.received == testBytes(1, seed: 3) + testBytes(2999, seed: 4) + testBytes(2000, seed: 5))
                #expect(sink.chunkCount == 5)
            }

            @Test func aLargeSharedHitLandsInTheDiskTierAsAFileWithoutPassingThroughMemory() async throws {
                let origin = try await Origin.start()
                defer { Task { await origin.stop() } }
                let shared = try await Postgres.tier { $0.chunkSize = .bytes(256 * 1024) }
                defer { shared.shutdown() }
                let photo = 1500  // 1,500,001 bytes: 6 chunk rows
                let url = origin.url(photo)
                let first = try loader(shared)
                let downloaded = try await first.response(for: ResourceRequest(url), delivery: .file)
                #expect(downloaded.source == .network)
                await first.waitForSharedTierWrites()  // streamed from the stored file
                #expect(try await shared.totals() == (size: Origin.body(photo).count, count: 1))

                let second = try loader(shared)
                let hit = try await second.response(for: ResourceRequest(url), delivery: .file)
                #expect(hit.source == .shared)
                let fileURL = try #require(hit.fileURL)
                #expect(try Data(contentsOf: fileURL) == Origin.body(photo))
                let attributes = try #require(try await second.cache.attributes(forKey: url.absoluteString))
                #expect(attributes.isInline == false)
                #expect(attributes.size == Origin.body(photo).count)
                #expect(attributes.metadata.etag == "\"v\(photo)\"")
                // The download file it streamed into was taken by the disk cache: nothing left behind.
                let downloads = second.cache.directory.appendingPathComponent("downloads").path
                #expect((try? FileManager.default.contentsOfDirectory(atPath: downloads)) ?? [] == [])
                #expect(origin.requests == 1)
                #expect(second.sharedTierStatistics.hits == 1)
            }

            func loader(_ shared: PostgresSharedTier) throws -> ResourceLoader {
                let disk = try DiskCache(directory: scratch.directory(), sizeLimit: .megabytes(50))
                var configuration = ResourceLoader.Configuration()
                configuration.sharedTier = shared
                return ResourceLoader(cache: disk, configuration: configuration)
            }

            static func fields(_ output: String) -> [String: String] {
                var fields: [String: String] = [:]
                for line in output.split(separator: "\n") where line.hasPrefix("RESULT ") {
                    for field in line.dropFirst(7).split(separator: " ") {
                        let parts = field.split(separator: "=", maxSplits: 1)
                        if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
                    }
                }
                return fields
            }
        }
    }

    /// A sink that keeps every chunk it receives in memory.
    // @unchecked: the tier calls it one call at a time.
    final class CollectingSink: SharedBodySink, @unchecked Sendable {
        private(set) var received = Data()
        private(set) var chunkCount = 0
        func begin(_ head: SharedEntryHead) async throws -> Bool { true }
        func append(_ chunk: Data) async throws {
            received.append(chunk)
            chunkCount += 1
        }
    }

    /// A fixed sequence of chunks, optionally failing after the last.
    struct Chunks: AsyncSequence, Sendable {
        let chunks: [Data]
        var failure: StashError?
        init(_ chunks: [Data], failure: StashError? = nil) {
            self.chunks = chunks
            self.failure = failure
        }
        func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks[...], failure: failure) }
        struct Iterator: AsyncIteratorProtocol {
            var chunks: ArraySlice<Data>
            var failure: StashError?
            mutating func next() async throws -> Data? {
                if let chunk = chunks.popFirst() { return chunk }
                if let failure { throw failure }
                return nil
            }
        }
    }
#endif
