#if Tool
    import Foundation
    import Testing

    /// What the tool does with a missing directory and a damaged index: the built binary's
    /// outputs and exit statuses.
    @Suite struct ReliabilityCommandTests {
        private func stash(_ arguments: String..., in directory: URL, input: Data = Data()) async throws
            -> StashTool.Result
        {
            try await StashTool.run(arguments + ["--dir", directory.path], input: input)
        }

        private static func bytes(_ count: Int, seed: UInt8) -> Data {
            Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
        }

        @Test(arguments: [["info"], ["ls"], ["get", "k"], ["verify"]])
        func readOnlyCommandsNeverCreateAMissingDirectory(command: [String]) async throws {
            try await withTemporaryDirectory { parent in
                let dir = parent.appendingPathComponent("nothing-here")
                let result = try await StashTool.run(command + ["--dir", dir.path])
                #expect(result.status == 74)
                #expect(result.output.isEmpty)
                #expect(
                    result.error
                        == "stash: No cache at \(dir.path): the directory does not exist. Check --dir, or store something first with 'stash put'.\n"
                )
                #expect(!FileManager.default.fileExists(atPath: dir.path))
            }
        }

        /// The report: three values stored, 200 bytes written over the start of the index.
        @Test func aDamagedIndexIsRebuiltReportedAndPinnedValuesComeBack() async throws {
            try await withTemporaryDirectory { dir in
                #expect(try await stash("put", "photo", in: dir, input: Self.bytes(50_000, seed: 1)).status == 0)
                #expect(try await stash("put", "mine", "--pin", in: dir, input: Self.bytes(300, seed: 2)).status == 0)
                #expect(try await stash("put", "note", in: dir, input: Self.bytes(100, seed: 3)).status == 0)
                let index = try FileHandle(forUpdating: dir.appendingPathComponent("index.sqlite"))
                try index.write(contentsOf: Data(repeating: 0xA5, count: 200))
                try index.close()

                let list = try await stash("ls", in: dir)
                #expect(list.status == 0)
                #expect(list.text.contains("photo") && list.text.contains("mine"), "\(list.text)")
                let aside = try #require(
                    try FileManager.default.contentsOfDirectory(atPath: dir.path).first {
                        $0.hasPrefix("index.sqlite.corrupt-")
                    })
                #expect(
                    list.error
                        == "stash: The index of \(dir.path) was lost or damaged (the index header is not an SQLite header) and was rebuilt from its files: 2 entries recovered, 0 lost; the old index was moved to \(dir.path)/\(aside).\n"
                )
                let get = try await stash("get", "mine", in: dir)
                #expect(get.status == 0)
                #expect(get.output == Self.bytes(300, seed: 2))
                #expect(get.error.isEmpty)

                let info = try await stash("info", in: dir)
                let row = try #require(info.text.split(separator: "\n").first { $0.hasPrefix("index ") })
                #expect(
                    row.contains(
                        "(the index header is not an SQLite header): 2 recovered, 0 lost; old index kept as \(aside)"))

                let verify = try await stash("verify", in: dir)
                #expect(verify.status == 0, "\(verify.text)\(verify.error)")
            }
        }

        @Test func verifyRebuildRebuildsAHealthyIndexAndKeepsEveryEntry() async throws {
            try await withTemporaryDirectory { dir in
                #expect(try await stash("put", "photo", in: dir, input: Self.bytes(50_000, seed: 1)).status == 0)
                #expect(try await stash("put", "note", in: dir, input: Self.bytes(100, seed: 3)).status == 0)
                let result = try await stash("verify", "--rebuild", in: dir)
                #expect(result.status == 0)
                #expect(
                    result.text.contains("index rebuilt (requested): 2 entries recovered, 0 lost"), "\(result.text)")
                #expect(try await stash("get", "note", in: dir).output == Self.bytes(100, seed: 3))
            }
        }
    }
#endif
