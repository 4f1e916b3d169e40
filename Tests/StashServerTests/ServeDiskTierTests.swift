#if Serve
    import Foundation
    import StashServer
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The disk tier behind `stash serve` (issue 42): reads off the event loops, bounded memory.
    @Suite(.serialized)
    struct ServeDiskTierTests {
        static func cacheable(_ body: Data) -> Origin.Reply {
            Origin.Reply(headers: [("Cache-Control", "max-age=3600")], body: body)
        }

        static func makeServer(origin: Origin, directory: URL, hold: (@Sendable (String) -> Void)? = nil) throws
            -> ProxyServer
        {
            var configuration = ProxyServer.Configuration(origin: URL(string: origin.url)!)
            configuration.port = 0
            configuration.workers = 1  // one event loop: every connection shares it
            configuration.directory = directory
            configuration.beforeDiskRead = hold
            return try ProxyServer(configuration: configuration)
        }

        /// While one disk-tier read is held up, memory-tier hits on other connections of the same
        /// (single) event loop keep answering; the held request then answers from disk.
        @Test func memoryHitsKeepAnsweringWhileADiskReadIsHeldUp() async throws {
            let origin = try await Origin.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let slowBody = Data(repeating: 7, count: 20_000)
            origin.set("/slow", Self.cacheable(slowBody))
            origin.set("/hot", Self.cacheable(Data("hot".utf8)))
            // A first server stores /slow on disk; the second starts with an empty memory tier.
            let first = try Self.makeServer(origin: origin, directory: directory)
            try await first.start()
            #expect(try await RawHTTP.request(port: first.port!, "/slow").status == 200)
            await first.shutdown()

            let held = HeldDiskRead(suffix: "/slow")
            let second = try Self.makeServer(origin: origin, directory: directory, hold: held.hook)
            try await second.start()
            let port = second.port!
            #expect(try await RawHTTP.request(port: port, "/hot").status == 200)  // into memory
            let slow = Task { try await RawHTTP.request(port: port, "/slow") }
            #expect(await eventually { held.isHolding })
            let start = ContinuousClock.now
            for _ in 0..<20 {
                let hit = try await RawHTTP.request(port: port, "/hot")
                #expect(hit.status == 200 && hit.text == "hot")
            }
            #expect(ContinuousClock.now - start < .seconds(5))
            held.release()
            let answer = try await slow.value
            #expect(answer.status == 200 && answer.body == slowBody)
            #expect(origin.requests("/slow").count == 1)
            #expect(origin.requests("/hot").count == 1)
            await second.shutdown()
            await origin.stop()
        }

        /// A response read back from the disk tier by a new process has the stored header fields
        /// exactly as the origin sent them, quotes, backslashes and non-ASCII bytes included
        /// (RFC 9111 §3.1, §4: the stored header section is what a hit answers with), and its `Vary`
        /// values still select it: a request with other values goes to the origin (RFC 9111 §4.1).
        @Test func headersAndVaryValuesSurviveTheDiskTier() async throws {
            let origin = try await Origin.start()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let fields: [(String, String)] = [
                ("Cache-Control", "max-age=3600"), ("ETag", "\"v1\""), ("X-Note", #"say "hi" \ there, {[:]}/"#),
                ("X-Name", "caf\u{E9} \u{65E5}\u{672C}"), ("Vary", "Accept-Language"),
            ]
            origin.set("/fields", Origin.Reply(headers: fields, body: Data("fields".utf8)))
            let first = try Self.makeServer(origin: origin, directory: directory)
            try await first.start()
            let fetched = try await RawHTTP.request(port: first.port!, "/fields", headers: [("Accept-Language", "fr")])
            #expect(fetched.status == 200)
            await first.shutdown()

            let second = try Self.makeServer(origin: origin, directory: directory)
            try await second.start()
            let hit = try await RawHTTP.request(port: second.port!, "/fields", headers: [("Accept-Language", "fr")])
            #expect(hit.status == 200 && hit.text == "fields")
            #expect(origin.requests("/fields").count == 1)
            for (name, value) in fields {
                #expect(hit.values(name) == [value], "\(name)")
                #expect(fetched.values(name) == [value], "\(name)")
            }
            let other = try await RawHTTP.request(port: second.port!, "/fields", headers: [("Accept-Language", "de")])
            #expect(other.status == 200)
            #expect(origin.requests("/fields").count == 2)
            await second.shutdown()
            await origin.stop()
        }

        #if os(Linux)
            /// Under a seeded working set twice the size of what the limit plus the overhead allow, a
            /// `stash serve` child process keeps its anonymous memory within `--memory-limit` + 64 MiB.
            ///
            /// Linux only: anonymous memory is read from `/proc/PID/status`.
            @Test
            func anonymousMemoryStaysWithinTheLimitUnderAWorkingSet() async throws {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-\(UUID())")
                defer { try? FileManager.default.removeItem(at: directory) }
                let objects = 2000
                var seed: UInt64 = 42
                func next() -> UInt64 {
                    seed &+= 0x9E37_79B9_7F4A_7C15
                    var z = seed
                    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                    return z ^ (z >> 31)
                }
                try await withProxy(["--dir", directory.path, "--memory-limit", "16MiB"]) { origin, proxy in
                    var total = 0
                    for index in 0..<objects {
                        let size = 16_384 + Int(next() % 180_000)
                        total += size
                        origin.set("/o/\(index)", Self.cacheable(Data(repeating: UInt8(index & 0xFF), count: size)))
                    }
                    #expect(total > 2 * (16 + 64) << 20)  // twice what the limit and the overhead allow
                    let pid = proxy.process.processIdentifier
                    var peak = 0
                    let port = proxy.port
                    // Two passes in a seeded order, four requests at a time.
                    for pass in 0..<2 {
                        var order = Array(0..<objects)
                        for i in stride(from: order.count - 1, to: 0, by: -1) {
                            order.swapAt(i, Int(next() % UInt64(i + 1)))
                        }
                        for start in stride(from: 0, to: objects, by: 4) {
                            try await withThrowingTaskGroup(of: Int.self) { group in
                                for index in order[start..<min(start + 4, objects)] {
                                    group.addTask { try await RawHTTP.request(port: port, "/o/\(index)").status }
                                }
                                for try await status in group { #expect(status == 200, "pass \(pass)") }
                            }
                            if start % 100 == 0, let anonymous = Self.anonymousBytes(pid) {
                                peak = max(peak, anonymous)
                            }
                        }
                    }
                    if let anonymous = Self.anonymousBytes(pid) { peak = max(peak, anonymous) }
                    print("stash serve anonymous RSS peak \(peak >> 20) MiB over \(total >> 20) MiB of bodies")
                    #expect(peak > 0)
                    // A sanitizer's shadow memory and quarantine are anonymous memory of their own.
                    if !BuildProducts.isSanitized {
                        #expect(peak <= (16 + 64) << 20, "anonymous RSS reached \(peak >> 20) MiB")
                    }
                }
            }

            static func anonymousBytes(_ pid: Int32) -> Int? {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                    let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
                    let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
                else { return nil }
                return kilobytes * 1024
            }
        #endif
    }
#endif
