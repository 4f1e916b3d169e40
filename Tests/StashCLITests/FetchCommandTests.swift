#if Tool
    import Foundation
    import Testing

    /// `stash fetch` against a real HTTP server on 127.0.0.1 that counts its requests.
    @Suite struct FetchCommandTests {
        private func stash(_ arguments: String..., in directory: URL) async throws -> StashTool.Result {
            try await StashTool.run(arguments + ["--dir", directory.path])
        }

        @Test func downloadsOnceThenServesFromDiskWithNoRequest() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let url = server.url("/files/photo-50000")
                    let first = try await stash("fetch", url, in: dir)
                    #expect(first.status == 0)
                    #expect(first.error == "")
                    #expect(
                        first.text.normalized(directory: dir) == """
                            http://127.0.0.1:$PORT/files/photo-50000: downloaded, 50.0 KB in $TIME
                              cached at $DIR/data/$FILE

                            """)
                    #expect(server.served.requests == 1)

                    let second = try await stash("fetch", url, in: dir)
                    #expect(second.status == 0)
                    #expect(
                        second.text.normalized(directory: dir) == """
                            http://127.0.0.1:$PORT/files/photo-50000: disk hit, 50.0 KB in $TIME
                              cached at $DIR/data/$FILE

                            """)
                    #expect(server.served.requests == 1)

                    let json = try await stash("fetch", url, "--json", in: dir)
                    let report = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
                    let result = try #require((report["results"] as? [[String: Any]])?.first)
                    #expect(result["outcome"] as? String == "disk-hit")
                    #expect(result["size"] as? Int == 50_000)
                    #expect(result["key"] as? String == url)
                    #expect(result["etag"] as? String == "\"v1\"")
                    let file = try #require(result["file"] as? String)
                    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == OriginServer.body("/files/photo-50000"))
                    #expect(server.served.requests == 1)

                    let get = try await stash("get", url, in: dir)
                    #expect(get.output == OriginServer.body("/files/photo-50000"))

                    let info = try await stash("info", "--json", in: dir)
                    let statistics = try #require(
                        (try JSONSerialization.jsonObject(with: info.output) as? [String: Any])?["statistics"]
                            as? [String: Int])
                    #expect(statistics["downloads"] == 1)
                    #expect(statistics["diskHits"] == 2)
                    #expect(statistics["bytesDownloaded"] == 50_000)
                    #expect(statistics["getHits"] == 1)
                }
            }
        }

        @Test func httpPolicyRevalidatesAndPicksUpAChangeAndReloadDownloadsAgain() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let path = "/files/doc-40000"
                    let url = server.url(path)
                    _ = try await stash("fetch", url, in: dir)

                    let unchanged = try await stash("fetch", url, "--policy", "http", in: dir)
                    #expect(
                        unchanged.text.normalized(directory: dir).hasPrefix(
                            "\(url.normalized()): revalidated, 40.0 KB in $TIME\n"))
                    #expect(server.served.notModified == 1)

                    server.change(path)
                    let changed = try await stash("fetch", url, "--policy", "http", in: dir)
                    #expect(
                        changed.text.normalized(directory: dir).hasPrefix(
                            "\(url.normalized()): downloaded, 40.0 KB in $TIME\n"))
                    #expect(try await stash("get", url, in: dir).output == OriginServer.body(path, version: 2))

                    let reload = try await stash("fetch", url, "--policy", "reload", in: dir)
                    #expect(
                        reload.text.normalized(directory: dir).hasPrefix(
                            "\(url.normalized()): downloaded, 40.0 KB in $TIME\n"))
                    #expect(server.served.requests == 4)
                    #expect(server.served.byPath[path] == 4)
                }
            }
        }

        @Test func outputOptionWritesTheBodyToAFileOrStandardOutput() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let url = server.url("/files/a-1000")
                    let copy = dir.appendingPathComponent("copy.bin")
                    let toFile = try await stash("fetch", url, "-o", copy.path, in: dir)
                    #expect(toFile.status == 0)
                    #expect(toFile.text.hasSuffix("  written to \(copy.path)\n"))
                    #expect(try Data(contentsOf: copy) == OriginServer.body("/files/a-1000"))

                    let toOutput = try await stash("fetch", url, "-o", "-", in: dir)
                    #expect(toOutput.status == 0)
                    #expect(toOutput.output == OriginServer.body("/files/a-1000"))
                    #expect(
                        toOutput.error.normalized(directory: dir).hasPrefix(
                            "\(url.normalized()): disk hit, 1.0 KB in $TIME\n"))
                    #expect(server.served.requests == 1)
                }
            }
        }

        @Test func failingURLsExitNonzeroWithOneLineEachWhileTheOthersSucceed() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let good = server.url("/files/ok-2000")
                    let missing = server.url("/missing")
                    let result = try await stash("fetch", missing, good, in: dir)
                    #expect(result.status == 74)
                    #expect(
                        result.text.normalized(directory: dir).hasPrefix(
                            "\(good.normalized()): downloaded, 2.0 KB in $TIME\n"))
                    #expect(
                        result.error
                            == "stash: GET \(missing) answered 404 Not Found; nothing was cached and any cached copy is unchanged. Check the URL.\n"
                    )

                    let json = try await stash("fetch", missing, "--json", in: dir)
                    #expect(json.status == 74)
                    let report = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
                    let failure = try #require((report["results"] as? [[String: Any]])?.first)
                    #expect(failure["outcome"] as? String == "failed")
                    #expect((failure["error"] as? String)?.contains("404 Not Found") == true)

                    let offline = try await stash(
                        "fetch", server.url("/files/never-10"), "--policy", "cache-only", in: dir)
                    #expect(offline.status == 1)
                    #expect(
                        offline.error
                            == "stash: \(server.url("/files/never-10")) is not in the cache, and --policy cache-only never downloads: fetch it once without it.\n"
                    )

                    // Nothing listens on port 1: the connection is refused (and retried twice).
                    let refused = try await stash("fetch", "http://127.0.0.1:1/photo.jpg", in: dir)
                    #expect(refused.status == 74)
                    #expect(refused.error.hasPrefix("stash: GET http://127.0.0.1:1/photo.jpg failed: "))
                    #expect(refused.error.hasSuffix("Check the network and the server. (3 attempts)\n"))
                    #expect(refused.error.filter { $0 == "\n" }.count == 1)
                }
            }
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
        func aLargeDownloadShowsAProgressBarOnATerminalOnly() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let url = server.url("/files/large-3000000")
                    // `script` gives stash a terminal; its output is everything written to it.
                    let command = [try StashTool.executable.path, "fetch", url, "--dir", dir.path].joined(
                        separator: " ")
                    let onTerminal = try await StashTool.runProcess(
                        URL(fileURLWithPath: "/usr/bin/script"), ["-q", "-e", "-c", command, "/dev/null"])
                    #expect(onTerminal.status == 0)
                    #expect(
                        onTerminal.text.contains("  [####################] 100 %  3.0 MB of 3.0 MB"),
                        "\(onTerminal.text)")
                    // The bar is erased before the report.
                    #expect(onTerminal.text.contains("\r\u{1B}[K\(url): downloaded, 3.0 MB in "))

                    let piped = try await stash("fetch", url, "--policy", "reload", in: dir)
                    #expect(piped.status == 0)
                    #expect(piped.error == "")
                    #expect(
                        piped.text.normalized(directory: dir).hasPrefix(
                            "\(url.normalized()): downloaded, 3.0 MB in $TIME\n"))
                }
            }
        }

        /// A stale copy may be served when the origin cannot be reached (RFC 9111 §4.2.4): this body is
        /// `max-age=0`. (A private loader also serves a `no-cache` copy offline, within
        /// `maximumStaleness`; a shared one never does.)
        @Test func stoppedOriginServesTheStaleCopyWithExitZeroUnlessRefusedOrTooOld() async throws {
            try await withTemporaryDirectory { dir in
                let server = try await OriginServer.start()
                let url = server.url("/files/stale-ok-20000")
                let first = try await stash("fetch", "--policy", "http", url, in: dir)
                #expect(first.status == 0)
                await server.stop()

                let stale = try await stash("fetch", "--policy", "http", url, in: dir)
                #expect(stale.status == 0)
                #expect(
                    stale.text.normalized(directory: dir) == """
                        http://127.0.0.1:$PORT/files/stale-ok-20000: stale, 20.0 KB in $TIME
                          cached at $DIR/data/$FILE

                        """)
                #expect(stale.error.hasPrefix("stash: served stale (origin unreachable: "))
                #expect(stale.error.hasSuffix(")\n"))
                #expect(stale.error.split(separator: "\n").count == 1)

                let json = try await stash("fetch", "--policy", "http", "--json", url, in: dir)
                let report = try #require(try JSONSerialization.jsonObject(with: json.output) as? [String: Any])
                let result = try #require((report["results"] as? [[String: Any]])?.first)
                #expect(result["outcome"] as? String == "stale")
                #expect((result["staleReason"] as? String)?.hasPrefix("origin unreachable: ") == true)

                let refused = try await stash("fetch", "--policy", "http", "--no-stale", url, in: dir)
                #expect(refused.status == 74)
                #expect(refused.error.contains(url))
                #expect(!refused.error.contains("served stale"))

                // The origin's max-age=0 made the copy stale as soon as it was stored: zero seconds refuse it.
                let tooOld = try await stash("fetch", "--policy", "http", "--max-stale", "0", url, in: dir)
                #expect(tooOld.status == 74)

                let negative = try await stash("fetch", "--max-stale=-1", url, in: dir)
                #expect(negative.status == 64)
                #expect(negative.error.contains("--max-stale must be 0 or more seconds, got -1"))
            }
        }

        @Test func interruptedDownloadIsResumedWithRangeByTheNextFetch() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let url = server.url("/files/video-300000")
                    server.cut("/files/video-300000", at: 120_000)
                    let interrupted = try await stash("fetch", url, in: dir)
                    #expect(interrupted.status == 74)
                    #expect(try await stash("get", url, in: dir).status == 1)

                    server.heal("/files/video-300000")
                    let resumed = try await stash("fetch", url, in: dir)
                    #expect(resumed.status == 0)
                    // The resume starts where the kept partial ends: at most the 120 000 bytes the origin sent
                    // (a transport may lose the last bytes still unread in the socket when the connection
                    // is reset), and never at zero.
                    let range = try #require(server.served.ranges.last)
                    let start = try #require(Int(range.dropFirst("bytes=".count).dropLast()))
                    #expect(range.hasPrefix("bytes=") && range.hasSuffix("-"))
                    #expect(start > 0 && start <= 120_000)
                    let body = try await stash("get", url, in: dir)
                    #expect(body.output == OriginServer.body("/files/video-300000"))
                }
            }
        }
    }
#endif
