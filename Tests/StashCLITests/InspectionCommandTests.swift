#if Tool
    import Foundation
    import Testing

    /// `info` and `verify`: the built binary's whole outputs and exit statuses.
    @Suite struct InspectionCommandTests {
        private func stash(_ arguments: String..., in directory: URL, input: Data = Data()) async throws
            -> StashTool.Result
        {
            try await StashTool.run(arguments + ["--dir", directory.path], input: input)
        }

        private static func bytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) }) }

        /// `info`'s text with the block-rounded disk usage, which depends on the file system, as `$USAGE`.
        private static func withoutDiskUsage(_ text: String) -> String {
            text.replacingOccurrences(
                of: #"on disk       [0-9.]+ [KM]?B"#, with: "on disk       $USAGE", options: .regularExpression)
        }

        @Test func infoReportsTheLimitTotalsAndStatisticsKeptAcrossInvocations() async throws {
            try await withTemporaryDirectory { dir in
                let fresh = try await stash("info", in: dir)
                #expect(fresh.status == 0)
                #expect(
                    Self.withoutDiskUsage(fresh.text).normalized(directory: dir) == """
                        directory     $DIR
                        size limit    150.0 MB of unpinned values (the default; set one with --size-limit)
                        eviction      adaptive (adaptive TinyLFU: a window sized to the workload, then a newcomer stays only if requested more often), down to 99 % of the limit when it is exceeded
                        entries       0, 0 B
                        on disk       $USAGE (index and files, rounded to blocks)
                        fetch policy  cache-first: a cached URL is served with no request (fetch --policy http revalidates, --policy reload downloads again)
                        statistics    of stash commands in this directory (programs using the library keep their own)
                                      get: 0 hits, 0 misses
                                      fetch: 0 memory hits, 0 disk hits, 0 revalidated, 0 downloads (0 B), 0 failures
                                      served from the cache: 0 B; evictions: 0
                        hit ratio     no reads yet

                        """)

                _ = try await stash("put", "a", "--size-limit", "10MB", in: dir, input: Self.bytes(1_000))
                _ = try await stash("put", "pinned", "--pin", in: dir, input: Self.bytes(500))
                #expect(try await stash("get", "a", in: dir).status == 0)
                #expect(try await stash("get", "a", in: dir).status == 0)
                #expect(try await stash("get", "missing", in: dir).status == 1)

                let info = try await stash("info", in: dir)
                #expect(
                    Self.withoutDiskUsage(info.text).normalized(directory: dir) == """
                        directory     $DIR
                        size limit    10.0 MB of unpinned values (remembered for this directory)
                        eviction      adaptive (adaptive TinyLFU: a window sized to the workload, then a newcomer stays only if requested more often), down to 99 % of the limit when it is exceeded
                        entries       2, 1.5 KB (1 pinned, 500 B, never evicted)
                        on disk       $USAGE (index and files, rounded to blocks)
                        fetch policy  cache-first: a cached URL is served with no request (fetch --policy http revalidates, --policy reload downloads again)
                        statistics    of stash commands in this directory (programs using the library keep their own)
                                      get: 2 hits, 1 miss
                                      fetch: 0 memory hits, 0 disk hits, 0 revalidated, 0 downloads (0 B), 0 failures
                                      served from the cache: 2.0 KB; evictions: 0
                        hit ratio     67 % (2 of 3 reads served from the cache)

                        """)

                // A lower limit takes effect at once, in the default policy's order: "a" was read
                // twice and stays; "b" and "c" were requested once each and wait in the window (a
                // new cache's window holds half of it), whose oldest unread entry, "b", goes.
                _ = try await stash("put", "b", in: dir, input: Self.bytes(15_000))
                _ = try await stash("put", "c", in: dir, input: Self.bytes(15_000))
                let lowered = try await stash("info", "--json", "--size-limit", "20KB", in: dir)
                let report = try #require(try JSONSerialization.jsonObject(with: lowered.output) as? [String: Any])
                #expect(report["sizeLimit"] as? Int == 20_000)
                #expect(report["sizeLimitSource"] as? String == "option")
                #expect(report["evictionPolicy"] as? String == "adaptive")
                #expect(report["totalCount"] as? Int == 3)
                #expect(report["totalSize"] as? Int == 16_500)
                #expect(report["pinnedCount"] as? Int == 1)
                let statistics = try #require(report["statistics"] as? [String: Int])
                #expect(statistics["getHits"] == 2)
                #expect(statistics["getMisses"] == 1)
                #expect(statistics["bytesServed"] == 2_000)
                #expect(statistics["evictions"] == 1)
                #expect(
                    try await stash("ls", in: dir).text
                        == " 1.0 KB  a\n15.0 KB  c\n  500 B  pinned  [pinned]\n3 entries, 16.5 KB (1 pinned, 500 B)\n")
            }
        }

        @Test func verifyFindsATruncatedValueAndRepairsIt() async throws {
            try await withTemporaryDirectory { dir in
                _ = try await stash("put", "big", in: dir, input: Self.bytes(50_000))
                _ = try await stash("put", "small", in: dir, input: Self.bytes(100))

                let healthy = try await stash("verify", in: dir)
                #expect(healthy.status == 0)
                #expect(
                    healthy.text == """
                        checked 2 entries (50.1 KB)
                        damaged entries: 0
                        orphan files: 0 (0 B)
                        totals: consistent
                        index: ok

                        """)

                let files = try #require(
                    FileManager.default.enumerator(atPath: dir.appendingPathComponent("data").path)
                )
                .compactMap { $0 as? String }.filter { $0.split(separator: "/").count == 3 && !$0.hasSuffix(".meta") }
                #expect(files.count == 1)
                let file = dir.appendingPathComponent("data").appendingPathComponent(try #require(files.first))
                try Data(count: 10).write(to: file)

                let damaged = try await stash("verify", in: dir)
                #expect(damaged.status == 1)
                #expect(
                    damaged.text.normalized(directory: dir)
                        == """
                        checked 2 entries (50.1 KB)
                        damaged entries: 1
                        orphan files: 0 (0 B)
                        totals: consistent
                        index: ok
                          damaged 'big': value file $FILE has 10 bytes, expected 50000
                        not repaired (run with repair)

                        """.replacingOccurrences(of: "$FILE", with: files[0]))
                #expect(
                    damaged.error
                        == "stash: Found damage in \(dir.path): run 'stash verify --repair' to drop damaged entries and orphan files.\n"
                )

                let repaired = try await stash("verify", "--repair", "--json", in: dir)
                #expect(repaired.status == 0)
                let report = try #require(try JSONSerialization.jsonObject(with: repaired.output) as? [String: Any])
                #expect(report["repaired"] as? Bool == true)
                #expect((report["damagedEntries"] as? [[String: String]])?.first?["key"] == "big")

                #expect(try await stash("verify", in: dir).status == 0)
                #expect(try await stash("get", "big", in: dir).status == 1)
                #expect(try await stash("get", "small", in: dir).output == Self.bytes(100))
            }
        }
    }
#endif
