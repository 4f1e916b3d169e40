#if Benchmarks
    import FlyingFox
    import FlyingSocks
    import Foundation
    import Stash

    /// The in-process origin: `/bytes/N/S` serves N deterministic bytes from seed S, `/photo/N` a
    /// photo of 20–120 KB; it counts every request (the fleet's "origin requests").
    final class BenchmarkOrigin: Sendable {
        let port: UInt16
        let requests = LockedValue(0)
        private let server: HTTPServer
        private let task: Task<Void, any Error>

        private init(server: HTTPServer, task: Task<Void, any Error>, port: UInt16) {
            self.server = server
            self.task = task
            self.port = port
        }

        static func start() async throws -> BenchmarkOrigin {
            let handler = Handler()
            let server = HTTPServer(
                address: try .inet(ip4: "127.0.0.1", port: 0), timeout: 60, logger: .disabled, handler: handler)
            let task = Task { try await server.run() }
            try await server.waitUntilListening()
            guard case .ip4(_, let port) = await server.listeningAddress else { throw URLError(.cannotConnectToHost) }
            let origin = BenchmarkOrigin(server: server, task: task, port: port)
            handler.origin.withLock { $0 = origin }
            return origin
        }

        func stop() async {
            await server.stop(timeout: 0)
            task.cancel()
        }

        static func photo(_ id: Int) -> Data { bytes(20_000 + (id * 7919) % 100_000, seed: UInt64(id)) }

        static func bytes(_ count: Int, seed: UInt64) -> Data {
            var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
            var data = Data(count: count)
            data.withUnsafeMutableBytes { buffer in
                let words = buffer.bindMemory(to: UInt8.self)
                for index in 0..<count {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    words[index] = UInt8(truncatingIfNeeded: state)
                }
            }
            return data
        }

        private final class Handler: HTTPHandler {
            let origin = LockedValue<BenchmarkOrigin?>(nil)
            let bodies = LockedValue([String: Data]())

            func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
                guard let origin = origin.withLock({ $0 }) else { return HTTPResponse(statusCode: .serviceUnavailable) }
                let parts = request.path.split(separator: "/").map(String.init)
                let body: Data
                if parts.count == 3, parts[0] == "bytes", let size = Int(parts[1]), let seed = UInt64(parts[2]) {
                    body =
                        bodies.withLock { $0[request.path] }
                        ?? {
                            let data = BenchmarkOrigin.bytes(size, seed: seed)
                            bodies.withLock { $0[request.path] = data }
                            return data
                        }()
                } else if parts.count == 2, parts[0] == "photo", let id = Int(parts[1]) {
                    body = BenchmarkOrigin.photo(id)
                } else {
                    return HTTPResponse(statusCode: .notFound)
                }
                origin.requests.withLock { $0 += 1 }
                var headers = HTTPHeaders()
                headers[HTTPHeader("Content-Type")] = "application/octet-stream"
                headers[HTTPHeader("ETag")] = "\"\(request.path)\""
                return HTTPResponse(statusCode: .ok, headers: headers, body: body)
            }
        }
    }
#endif
