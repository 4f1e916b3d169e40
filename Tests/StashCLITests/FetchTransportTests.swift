#if Tool
    import Foundation
    import Testing

    /// `stash fetch --transport`: both HTTP clients download the same bytes and report alike.
    @Suite struct FetchTransportTests {
        @Test(arguments: ["urlsession", "async-http-client"])
        func eitherTransportDownloadsThenServesFromDisk(transport: String) async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { dir in
                    let url = server.url("/files/photo-50000")
                    let arguments = ["fetch", url, "--transport", transport, "--dir", dir.path]
                    let first = try await StashTool.run(arguments)
                    #expect(first.status == 0)
                    #expect(first.error == "")
                    #expect(
                        first.text.normalized(directory: dir) == """
                            http://127.0.0.1:$PORT/files/photo-50000: downloaded, 50.0 KB in $TIME
                              cached at $DIR/data/$FILE

                            """)
                    let second = try await StashTool.run(arguments)
                    #expect(second.text.normalized(directory: dir).hasPrefix("\(url.normalized()): disk hit, 50.0 KB"))
                    #expect(server.served.requests == 1)
                    let get = try await StashTool.run(["get", url, "--dir", dir.path])
                    #expect(get.output == OriginServer.body("/files/photo-50000"))
                }
            }
        }

        @Test func unknownTransportIsRefusedWithTheChoices() async throws {
            try await withTemporaryDirectory { dir in
                let result = try await StashTool.run(
                    ["fetch", "http://127.0.0.1:9/a", "--transport", "curl", "--dir", dir.path])
                #expect(result.status == 64)
                #expect(
                    result.error
                        == "stash: The value 'curl' is invalid for '--transport <client>'. Please provide one of 'urlsession' and 'async-http-client'. Run 'stash fetch --help' for usage.\n"
                )
            }
        }
    }
#endif
