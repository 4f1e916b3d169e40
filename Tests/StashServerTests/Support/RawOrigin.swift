#if Serve
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A hand-written HTTP/1.1 origin on 127.0.0.1 for what FlyingFox cannot send.
    ///
    /// Interim (1xx) responses before the final one, a body sent in stages. Each connection is served on a thread
    /// of its own by a script that writes the bytes of its answer; the connection is closed after it, or, for
    /// an origin started with `keepAlive`, serves the next request until the proxy closes it.
    final class RawOrigin: Sendable {
        /// Writes the answer to one request (its head as text) on `connection`.
        typealias Script = @Sendable (_ request: String, _ connection: Connection) throws -> Void

        /// One accepted connection.
        struct Connection: Sendable {
            let socket: Int32

            func send(_ text: String) throws { try RawHTTP.write(socket, Data(text.utf8)) }
            func send(_ data: Data) throws { try RawHTTP.write(socket, data) }
        }

        let port: Int
        private let listener: Int32
        private let keepAlive: Bool
        private let heads = Locked([String]())
        private let accepted = Locked(0)

        private init(listener: Int32, port: Int, keepAlive: Bool) {
            self.listener = listener
            self.port = port
            self.keepAlive = keepAlive
        }

        var url: String { "http://127.0.0.1:\(port)" }

        /// The request heads received, in order.
        var requests: [String] { heads.withLock { $0 } }

        /// The connections that carried a request so far (not the proxy's start-up check, which
        /// connects and closes).
        var connections: Int { accepted.withLock { $0 } }

        /// Listens on a port the system picks and serves every connection with `script`.
        ///
        /// - Parameter keepAlive: Serves every request of a connection, not only its first.
        static func start(keepAlive: Bool = false, _ script: @escaping Script) throws -> RawOrigin {
            #if canImport(Glibc)
                let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
                let listener = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard listener >= 0 else { throw RawHTTP.Failure(description: "socket() failed: \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(listener, pointer, length) == 0 && listen(listener, 16) == 0
                        && getsockname(listener, pointer, &length) == 0
                }
            }
            guard bound else {
                close(listener)
                throw RawHTTP.Failure(description: "listening on 127.0.0.1 failed: \(errno)")
            }
            let origin = RawOrigin(
                listener: listener, port: Int(UInt16(bigEndian: address.sin_port)), keepAlive: keepAlive)
            Thread { origin.acceptLoop(script) }.start()
            return origin
        }

        /// Stops accepting; connections in progress finish their scripts.
        func stop() {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }

        private func acceptLoop(_ script: @escaping Script) {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else {
                    if errno == EINTR { continue }
                    return
                }
                Thread { [heads, accepted, keepAlive] in
                    defer { close(connection) }
                    var first = true
                    repeat {
                        guard let head = Self.readHead(connection) else { return }
                        if first { accepted.withLock { $0 += 1 } }
                        first = false
                        heads.withLock { $0.append(head) }
                        guard (try? script(head, Connection(socket: connection))) != nil else { break }
                    } while keepAlive
                    shutdown(connection, Int32(SHUT_WR))
                }.start()
            }
        }

        /// Reads a request head, and skips the content its `Content-Length` announces.
        private static func readHead(_ socket: Int32) -> String? {
            var data = Data()
            var byte: UInt8 = 0
            while !data.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                guard recv(socket, &byte, 1, 0) == 1 else { return nil }
                data.append(byte)
            }
            let head = String(decoding: data, as: UTF8.self)
            let length = head.components(separatedBy: "\r\n").lazy
                .filter { $0.lowercased().hasPrefix("content-length:") }
                .compactMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                .first
            var remaining = length ?? 0
            var buffer = [UInt8](repeating: 0, count: 4096)
            while remaining > 0 {
                let count = recv(socket, &buffer, min(remaining, buffer.count), 0)
                guard count > 0 else { return nil }
                remaining -= count
            }
            return head
        }
    }
#endif
