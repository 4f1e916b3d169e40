#if Tool
    import Foundation
    import Testing

    /// `put`, `get`, `ls`, `rm`, `pin`, `unpin`, `trim`, `clear`: the built binary's whole outputs
    /// and exit statuses.
    @Suite struct StorageCommandTests {
        private func stash(_ arguments: String..., in directory: URL, input: Data = Data()) async throws
            -> StashTool.Result
        {
            try await StashTool.run(arguments + ["--dir", directory.path], input: input)
        }

        private static func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
            Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        }

        @Test func putThenGetRoundTripsFilesAndStandardInput() async throws {
            try await withTemporaryDirectory { root in
                let dir = root.appendingPathComponent("cache")
                let photo = Self.bytes(40_000)
                let file = root.appendingPathComponent("photo.jpg")
                try photo.write(to: file)

                let put = try await stash("put", "photo", file.path, in: dir)
                #expect(put.status == 0)
                #expect(put.text == "stored 'photo' (40.0 KB)\n")
                #expect(put.error == "")

                let putInput = try await stash("put", "notes", "--pin", in: dir, input: Data("hello\n".utf8))
                #expect(putInput.text == "stored 'notes' (6 B, pinned)\n")

                let get = try await stash("get", "photo", in: dir)
                #expect(get.status == 0)
                #expect(get.output == photo)
                #expect(get.error == "")

                let copy = root.appendingPathComponent("notes.txt")
                let getToFile = try await stash("get", "notes", "-o", copy.path, in: dir)
                #expect(getToFile.text == "wrote 'notes' (6 B) to \(copy.path)\n")
                #expect(try Data(contentsOf: copy) == Data("hello\n".utf8))

                let json = try await stash("get", "notes", "--json", in: dir)
                let entry = try JSONSerialization.jsonObject(with: json.output) as? [String: Any]
                #expect(entry?["key"] as? String == "notes")
                #expect(entry?["size"] as? Int == 6)
                #expect(entry?["pinned"] as? Bool == true)

                let miss = try await stash("get", "missing", in: dir)
                #expect(miss.status == 1)
                #expect(miss.output.isEmpty)
                #expect(
                    miss.error == "stash: No entry under 'missing' in \(dir.path): list the keys with 'stash ls'.\n")
            }
        }

        /// What `stash put` is given stays, even where the default policy would turn a large
        /// newcomer away: here 95 KB into a 100 KB cache of small values each read twice, worth
        /// far more per byte.
        @Test func putKeepsALargeValueTheAdmissionPolicyWouldTurnAway() async throws {
            try await withTemporaryDirectory { dir in
                for i in 0..<5 {
                    let put = try await stash(
                        "put", "s\(i)", "--size-limit", "100KB", in: dir, input: Self.bytes(15_000, seed: UInt8(i)))
                    #expect(put.status == 0)
                    for _ in 0..<2 { #expect(try await stash("get", "s\(i)", in: dir).status == 0) }
                }

                let big = try await stash("put", "big", in: dir, input: Self.bytes(95_000))

                #expect(big.error == "")
                #expect(big.text == "stored 'big' (95.0 KB)\n")
                let get = try await stash("get", "big", in: dir)
                #expect(get.output == Self.bytes(95_000))
            }
        }

        @Test func listShowsSizesKeysAndPinsInTheRequestedOrder() async throws {
            try await withTemporaryDirectory { dir in
                _ = try await stash("put", "a", in: dir, input: Self.bytes(300))
                _ = try await stash("put", "b", "--pin", in: dir, input: Self.bytes(50_000))
                _ = try await stash("put", "c", in: dir, input: Self.bytes(2_000))

                let byKey = try await stash("ls", in: dir)
                #expect(byKey.status == 0)
                #expect(
                    byKey.text == """
                          300 B  a
                        50.0 KB  b  [pinned]
                         2.0 KB  c
                        3 entries, 52.3 KB (1 pinned, 50.0 KB)

                        """)

                let bySize = try await stash("ls", "--sort", "size", "--limit", "2", in: dir)
                #expect(
                    bySize.text == """
                        50.0 KB  b  [pinned]
                         2.0 KB  c
                        3 entries, 52.3 KB (1 pinned, 50.0 KB); showing 2

                        """)

                let byCreation = try await stash("ls", "--sort", "created", in: dir)
                #expect(
                    byCreation.text.split(separator: "\n").prefix(3).map { $0.split(separator: " ")[2] } == [
                        "c", "b", "a",
                    ])

                _ = try await stash("get", "a", in: dir)
                let byAccess = try await stash("ls", "--sort", "access", "--limit", "1", in: dir)
                #expect(byAccess.text == "300 B  a\n3 entries, 52.3 KB (1 pinned, 50.0 KB); showing 1\n")

                let json = try await stash("ls", "--json", in: dir)
                let report = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
                let entries = try #require(report["entries"] as? [[String: Any]])
                #expect(entries.map { $0["key"] as? String } == ["a", "b", "c"])
                #expect(entries.map { $0["size"] as? Int } == [300, 50_000, 2_000])
                #expect(entries.map { $0["pinned"] as? Bool } == [false, true, false])
                #expect(report["totalCount"] as? Int == 3)
                #expect(report["pinnedSize"] as? Int == 50_000)

                try FileManager.default.createDirectory(
                    at: dir.appendingPathComponent("new"), withIntermediateDirectories: false)
                let empty = try await stash("ls", in: dir.appendingPathComponent("new"))
                #expect(empty.text == "0 entries, 0 B\n")
            }
        }

        @Test func removePinAndUnpinReportEachKeyAndAMissExitsOne() async throws {
            try await withTemporaryDirectory { dir in
                _ = try await stash("put", "a", in: dir, input: Self.bytes(300))
                _ = try await stash("put", "c", in: dir, input: Self.bytes(2_000))

                let pin = try await stash("pin", "c", in: dir)
                #expect(pin.status == 0)
                #expect(pin.text == "pinned 'c'\n")
                let pinJSON = try await stash("unpin", "c", "--json", in: dir)
                #expect(pinJSON.text == "{\n  \"key\" : \"c\",\n  \"pinned\" : false\n}\n")
                let pinMissing = try await stash("pin", "nope", in: dir)
                #expect(pinMissing.status == 1)
                #expect(
                    pinMissing.error
                        == "stash: No entry under 'nope' in \(dir.path) to pin: store it first with 'stash put'.\n")

                let remove = try await stash("rm", "a", "nope", in: dir)
                #expect(remove.status == 1)
                #expect(remove.text == "removed 'a' (300 B)\n")
                #expect(
                    remove.error
                        == "stash: No entry under 'nope' in \(dir.path), so nothing was removed for it: list the keys with 'stash ls'.\n"
                )
                let removeJSON = try await stash("rm", "c", "--json", in: dir)
                #expect(removeJSON.status == 0)
                #expect(
                    removeJSON.text == """
                        {
                          "missing" : [

                          ],
                          "removed" : [
                            {
                              "key" : "c",
                              "size" : 2000
                            }
                          ]
                        }

                        """)
                #expect(try await stash("ls", in: dir).text == "0 entries, 0 B\n")
            }
        }

        @Test func trimEvictsLeastRecentlyUsedAndClearEmptiesEverything() async throws {
            try await withTemporaryDirectory { dir in
                // The policy chosen once is kept by the commands that follow without --eviction.
                _ = try await stash("put", "k1", "--pin", "--eviction", "lru", in: dir, input: Self.bytes(10_000))
                for key in ["k2", "k3", "k4"] { _ = try await stash("put", key, in: dir, input: Self.bytes(10_000)) }
                _ = try await stash("get", "k2", in: dir)

                let policy = try await stash("info", "--json", in: dir)
                #expect(
                    (try JSONSerialization.jsonObject(with: policy.output) as? [String: Any])?["evictionPolicy"]
                        as? String
                        == "lru")
                let trim = try await stash("trim", "--to", "15KB", in: dir)
                #expect(trim.status == 0)
                #expect(
                    trim.text == "trimmed 2 entries (20.0 KB); 2 entries, 20.0 KB remain (10.0 KB of them pinned)\n")
                #expect(
                    try await stash("ls", in: dir).text == """
                        10.0 KB  k1  [pinned]
                        10.0 KB  k2
                        2 entries, 20.0 KB (1 pinned, 10.0 KB)

                        """)

                let clear = try await stash("clear", in: dir)
                #expect(clear.status == 0)
                #expect(clear.text == "removed 2 entries (20.0 KB); statistics reset\n")
                #expect(try await stash("ls", in: dir).text == "0 entries, 0 B\n")
                let info = try await stash("info", "--json", in: dir)
                let statistics = try #require(
                    (try JSONSerialization.jsonObject(with: info.output) as? [String: Any])?["statistics"]
                        as? [String: Int]
                )
                #expect(statistics.values.allSatisfy { $0 == 0 })
            }
        }
    }
#endif
