#if Serve
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A minimal HTTP/1.1 client on a blocking socket (on a thread of its own, never the cooperative
    /// pool), so that tests control every byte sent: hop-by-hop fields, pipelining, slow heads.
    enum RawHTTP {
        struct Response: Sendable {
            var status: Int
            var headers: [(name: String, value: String)]
            var body: Data

            /// The first value of a field, by case-insensitive name.
            func header(_ name: String) -> String? {
                headers.first { $0.name.lowercased() == name.lowercased() }?.value
            }

            /// Every value of a field.
            func values(_ name: String) -> [String] {
                headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
            }

            var text: String { String(decoding: body, as: UTF8.self) }
        }

        struct Failure: Error, CustomStringConvertible { var description: String }

        /// Sends one request with `Connection: close` and reads the whole response.
        static func request(
            port: Int, method: String = "GET", _ target: String, headers: [(String, String)] = [], body: Data = Data()
        ) async throws -> Response {
            var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
            head += "Connection: close\r\n\r\n"
            let raw = try await exchange(port: port, send: Data(head.utf8) + body)
            guard let response = parse(raw, isHead: method == "HEAD").first else {
                throw Failure(description: "no response to \(method) \(target): \(raw.count) bytes")
            }
            return response
        }

        /// Sends `send`, then reads until the server closes the connection (or `timeout` passes).
        static func exchange(port: Int, send: Data, timeout: Double = 20) async throws -> Data {
            try await onThread {
                let socket = try connect(port: port, timeout: timeout)
                defer { close(socket) }
                try write(socket, send)
                return readToEnd(socket)
            }
        }

        /// Connects, sends `first`, waits `pause` seconds, sends `rest`, then reads to the end.
        static func slowExchange(port: Int, first: Data, pause: Double, rest: Data, timeout: Double = 20)
            async throws -> Data
        {
            try await onThread {
                let socket = try connect(port: port, timeout: timeout)
                defer { close(socket) }
                try write(socket, first)
                Thread.sleep(forTimeInterval: pause)
                try? write(socket, rest)
                return readToEnd(socket)
            }
        }

        /// Runs blocking socket work on a thread of its own.
        static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
                }
                thread.start()
            }
        }

        static func connect(port: Int, timeout: Double) throws -> Int32 {
            #if canImport(Glibc)
                let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard socket >= 0 else { throw Failure(description: "socket() failed: \(errno)") }
            var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    #if canImport(Glibc)
                        Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    #else
                        Darwin.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    #endif
                }
            }
            guard result == 0 else {
                close(socket)
                throw Failure(description: "connect to 127.0.0.1:\(port) failed: \(errno)")
            }
            return socket
        }

        static func write(_ socket: Int32, _ data: Data) throws {
            try data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let sent = send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    guard sent > 0 else { throw Failure(description: "send failed: \(errno)") }
                    offset += sent
                }
            }
        }

        static func readToEnd(_ socket: Int32) -> Data {
            var result = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                if count <= 0 { break }
                result.append(contentsOf: buffer[0..<count])
            }
            return result
        }

        /// Parses the responses in `raw`, one after the other (pipelined responses included).
        static func parse(_ raw: Data, isHead: Bool = false) -> [Response] {
            var responses: [Response] = []
            var rest = raw[...]
            let separator = Data("\r\n\r\n".utf8)
            while let end = rest.range(of: separator) {
                let headText = String(decoding: rest[rest.startIndex..<end.lowerBound], as: UTF8.self)
                var lines = headText.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { break }
                let headers = lines.compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        String(line[..<colon]),
                        String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                    )
                }
                var response = Response(status: status, headers: headers, body: Data())
                rest = rest[end.upperBound...]
                if isHead || status == 304 || status == 204 {
                    responses.append(response)
                    continue
                }
                if let length = response.header("content-length").flatMap({ Int($0) }) {
                    let available = min(length, rest.count)
                    response.body = Data(rest.prefix(available))
                    rest = rest.dropFirst(available)
                } else if response.header("transfer-encoding")?.lowercased() == "chunked" {
                    while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
                        let sizeText = String(decoding: rest[rest.startIndex..<lineEnd.lowerBound], as: UTF8.self)
                        guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else { break }
                        rest = rest[lineEnd.upperBound...]
                        if size == 0 {
                            rest = rest.dropFirst(2)
                            break
                        }
                        response.body.append(contentsOf: rest.prefix(size))
                        rest = rest.dropFirst(size + 2)
                    }
                } else {
                    response.body = Data(rest)
                    rest = rest.suffix(0)
                }
                responses.append(response)
            }
            return responses
        }
    }
#endif
