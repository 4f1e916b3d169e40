#if Tool
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Bad input and failing directories: exit status 64 or 74, and one clear line on standard error.
    @Suite struct ErrorTests {
        @Test(
            arguments: [
                (
                    ["ls", "--size-limit", "10XB"],
                    "stash: Invalid size '10XB' for --size-limit: write a number followed by a unit, such as 500KB, 10MB, 1.5GB or 64MiB. Run 'stash ls --help' for usage.\n"
                ),
                (
                    ["put", "k", "--size-limit", "0"],
                    "stash: Invalid size '0' for --size-limit: it must be more than 0 bytes, such as 10MB. Run 'stash put --help' for usage.\n"
                ),
                (
                    ["trim", "--to", "lots"],
                    "stash: Invalid size 'lots' for --to: write a number followed by a unit, such as 500KB, 10MB, 1.5GB or 64MiB. Run 'stash trim --help' for usage.\n"
                ),
                (
                    ["info", "--eviction", "lfu"],
                    "stash: Unknown eviction policy 'lfu' for --eviction: use one of lru, fifo, sieve, s3-fifo, tinylfu, adaptive, tinylfu-bytes. Run 'stash info --help' for usage.\n"
                ),
                (["get"], "stash: Missing expected argument '<key>'. Run 'stash get --help' for usage.\n"),
                (["frobnicate"], "stash: Unexpected argument 'frobnicate'. Run 'stash --help' for usage.\n"),
                (["ls", "--sort", "colour"], nil),
                (
                    ["ls", "--limit", "0"],
                    "stash: Invalid --limit 0: give a positive number of entries. Run 'stash ls --help' for usage.\n"
                ),
                (
                    ["rm"],
                    "stash: Name at least one key to remove, such as 'stash rm photo-42'. Run 'stash rm --help' for usage.\n"
                ),
                (["get", ""], "stash: A cache key must not be empty: use a non-empty string such as the URL.\n"),
                (
                    ["fetch", "ftp://example.com/a"],
                    "stash: 'ftp://example.com/a' is not an http or https URL: write it in full, such as https://example.com/a.jpg. Run 'stash fetch --help' for usage.\n"
                ),
                (
                    ["fetch", "--shared", "postgres://stash@127.0.0.1:1/stash", "--shared-timeout", "0", "http://a/1"],
                    "stash: Invalid --shared-timeout 0.0: give the seconds one operation may take, more than 0 and at most 3600, such as 2 or 0.5. Run 'stash fetch --help' for usage.\n"
                ),
                (
                    ["info", "--shared-timeout", "5"],
                    "stash: --shared-timeout sets up the shared tier, which needs --shared postgres://USER@HOST[:PORT]/DATABASE. Run 'stash info --help' for usage.\n"
                ),
                (
                    ["get", "--shared", "postgres://stash@127.0.0.1:1/stash", "--shared-size-limit", "lots", "k"],
                    "stash: Invalid size 'lots' for --shared-size-limit: write a number followed by a unit, such as 500KB, 10MB, 1.5GB or 64MiB. Run 'stash get --help' for usage.\n"
                ),
                (
                    [
                        "demo", "--fleet", "2", "--shared", "postgres://stash@127.0.0.1:1/stash", "--shared-table",
                        "mine",
                    ],
                    "stash: The demo uses a table of its own with the default limits: drop --shared-table, --shared-size-limit and --shared-timeout. Run 'stash demo --help' for usage.\n"
                ),
                (
                    ["fetch", "http://a/1", "http://a/2", "-o", "x"],
                    "stash: -o writes one body: give one URL with it, or fetch the URLs without -o. Run 'stash fetch --help' for usage.\n"
                ),
            ] as [([String], String?)])
        func badUsageExitsSixtyFourWithOneLine(arguments: [String], expected: String?) async throws {
            try await withTemporaryDirectory { dir in
                // The default directory, under a temporary XDG_CACHE_HOME, so that no test touches ~/.cache.
                let result = try await StashTool.run(arguments, environment: ["XDG_CACHE_HOME": dir.path])
                #expect(result.status == 64, "\(arguments)")
                #expect(result.output.isEmpty, "\(arguments)")
                #expect(result.error.hasPrefix("stash: "), "\(arguments)")
                #expect(result.error.filter { $0 == "\n" }.count == 1, "\(arguments): \(result.error)")
                if let expected { #expect(result.error == expected) }
            }
        }

        @Test func helpExitsZeroAndNamesEverySubcommand() async throws {
            let result = try await StashTool.run(["--help"])
            #expect(result.status == 0)
            for name in ["fetch", "get", "put", "rm", "pin", "unpin", "ls", "info", "trim", "clear", "verify", "demo"] {
                #expect(result.text.contains("  \(name) "), "\(name)")
            }
            let subcommand = try await StashTool.run(["fetch", "--help"])
            #expect(subcommand.status == 0)
            #expect(subcommand.text.contains("--policy"))
        }

        @Test func aDirectoryThatCannotBeCreatedExitsSeventyFour() async throws {
            try await withTemporaryDirectory { root in
                let file = root.appendingPathComponent("file")
                try Data("not a directory".utf8).write(to: file)
                let dir = file.appendingPathComponent("cache")
                let result = try await StashTool.run(["put", "k", "--dir", dir.path], input: Data("x".utf8))
                #expect(result.status == 74)
                #expect(result.output.isEmpty)
                #expect(
                    result.error
                        == "stash: Cannot create the cache directory \(dir.path): check that its parent exists and is writable. (mkdir \(dir.path): Not a directory (errno 20))\n"
                )
            }
        }

        @Test func aReadOnlyDirectoryExitsSeventyFour() async throws {
            try await withTemporaryDirectory { root in
                let dir = root.appendingPathComponent("locked")
                try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
                try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir.path)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
                defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path) }
                // Root ignores permissions, so run the attempt as an unprivileged user.
                let prefix =
                    getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
                if getuid() == 0 {
                    try #require(access(try StashTool.executable.path, R_OK | X_OK) == 0)
                }
                let result = try await StashTool.run(
                    ["put", "k", "--dir", dir.path], input: Data("v".utf8), prefix: prefix)
                #expect(result.status == 74)
                #expect(result.output.isEmpty)
                #expect(result.error.hasPrefix("stash: "))
                #expect(result.error.contains(dir.path))
                #expect(result.error.filter { $0 == "\n" }.count == 1, "\(result.error)")
            }
        }

        @Test func aMissingFileToPutExitsSeventyFour() async throws {
            try await withTemporaryDirectory { dir in
                let missing = dir.appendingPathComponent("missing.jpg").path
                let result = try await StashTool.run(["put", "k", missing, "--dir", dir.path])
                #expect(result.status == 74)
                #expect(result.error == "stash: Cannot store \(missing) under 'k': the file does not exist.\n")
            }
        }
    }
#endif
