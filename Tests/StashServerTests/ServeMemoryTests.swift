// Linux only: the proxy's resident memory is read from /proc/PID/status.
#if Serve && os(Linux)
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Bodies stream through `stash serve` with bounded memory (issue 32).
    @Suite(.serialized)
    struct ServeMemoryTests {
        static let size = 1 << 30

        /// A 1 GiB body relayed to a client that reads slower than the origin sends grows the proxy's
        /// resident memory by at most 64 MiB: the proxy never buffers the body.
        @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/status")))
        func gibibyteBodyToSlowClientKeepsMemoryBounded() async throws {
            try await withProxy { origin, proxy in
                origin.set(
                    "/huge",
                    Origin.Reply(headers: [("Cache-Control", "no-store")], streamedSize: Self.size))
                let pid = proxy.process.processIdentifier
                let baseline = try #require(Self.residentBytes(pid))
                let peak = Locked(baseline)
                let done = Locked(false)
                let sampler = Thread {
                    while !done.withLock({ $0 }) {
                        if let rss = Self.residentBytes(pid) { peak.withLock { $0 = max($0, rss) } }
                        usleep(20_000)
                    }
                }
                sampler.start()
                let port = proxy.port
                let received = try await RawHTTP.onThread { () -> Int in
                    let socket = try RawHTTP.connect(port: port, timeout: 60)
                    defer { close(socket) }
                    var small: Int32 = 64 * 1024
                    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                    try RawHTTP.write(socket, Data("GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
                    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
                    var total = 0
                    var sincePause = 0
                    while true {
                        let count = recv(socket, &buffer, buffer.count, 0)
                        if count <= 0 { break }
                        total += count
                        sincePause += count
                        // A slow reader: pauses 1 ms every 2 MiB.
                        if sincePause >= 2 << 20 {
                            sincePause = 0
                            usleep(1_000)
                        }
                    }
                    return total
                }
                done.withLock { $0 = true }
                let growth = peak.withLock { $0 } - baseline
                print(
                    "stash serve RSS: \(baseline >> 20) MiB before, peak growth \(growth >> 20) MiB"
                        + " over \(received >> 20) MiB")
                #expect(received > Self.size)
                // A sanitizer's shadow memory and quarantine grow with every allocation.
                if !BuildProducts.isSanitized {
                    #expect(growth <= 64 << 20, "RSS grew by \(growth >> 20) MiB")
                }
            }
        }

        static func residentBytes(_ pid: Int32) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else { return nil }
            return kilobytes * 1024
        }
    }
#endif
