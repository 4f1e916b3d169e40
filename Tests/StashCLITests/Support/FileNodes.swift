#if Tool
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Files that are not regular files, made for a test inside its temporary directory.
    enum FileNodes {
        /// Runs `stash` as the unprivileged user nobody; nil when the tests do not run as root or
        /// `setpriv` is missing.
        static let asNobody: [String]? =
            getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : nil

        /// The file's type (`S_IFCHR`, `S_IFIFO`, `S_IFLNK`, …), not following a link; nil when absent.
        static func type(_ url: URL) -> mode_t? {
            var info = stat()
            return lstat(url.path, &info) == 0 ? info.st_mode & S_IFMT : nil
        }

        /// The device number, not following a link.
        static func device(_ url: URL) -> dev_t? {
            var info = stat()
            return lstat(url.path, &info) == 0 ? info.st_rdev : nil
        }

        /// The inode and permission bits, not following a link.
        static func inodeAndMode(_ url: URL) -> (inode: UInt64, mode: mode_t)? {
            var info = stat()
            return lstat(url.path, &info) == 0 ? (UInt64(info.st_ino), info.st_mode & 0o7777) : nil
        }

        struct SystemCallFailed: Error, CustomStringConvertible {
            var description: String
            init(_ call: String) { description = "\(call): \(String(cString: strerror(errno)))" }
        }

        /// Makes a private null device: a node with `/dev/null`'s device number, mode 0666 (root only).
        ///
        /// `/dev/null` itself is only looked at, never written.
        static func makeNullDevice(at url: URL) throws {
            var null = stat()
            guard stat("/dev/null", &null) == 0 else { throw SystemCallFailed("stat /dev/null") }
            guard mknod(url.path, S_IFCHR | 0o666, null.st_rdev) == 0 else { throw SystemCallFailed("mknod") }
            guard chmod(url.path, 0o666) == 0 else { throw SystemCallFailed("chmod") }
        }

        /// A FIFO, mode 0666.
        static func makeFIFO(at url: URL) throws {
            guard mkfifo(url.path, 0o666) == 0, chmod(url.path, 0o666) == 0 else { throw SystemCallFailed("mkfifo") }
        }

        /// A directory that the unprivileged user can enter and write (`mktemp -d` and
        /// `withTemporaryDirectory` make them 0700 or 0755).
        static func makeWorldWritable(_ url: URL) throws {
            guard chmod(url.path, 0o777) == 0 else { throw SystemCallFailed("chmod") }
        }
    }

    /// Reads a FIFO on a thread of its own, as `cat FIFO` would, so that the writer under test meets
    /// a real reader.
    final class FIFOReader: Sendable {
        private let path: String
        private let opened: Task<Void, Never>
        private let bytes: Task<Data, Never>

        /// Starts reading; with `limit`, the reader closes the FIFO after that many bytes.
        init(_ url: URL, limit: Int? = nil) {
            path = url.path
            let path = url.path
            let (openedStream, openedContinuation) = AsyncStream<Void>.makeStream()
            let (bytesStream, bytesContinuation) = AsyncStream<Data>.makeStream()
            Thread {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                openedContinuation.finish()
                var data = Data()
                if descriptor >= 0 {
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while limit.map({ data.count < $0 }) ?? true {
                        let wanted = min(buffer.count, limit.map { $0 - data.count } ?? buffer.count)
                        let count = read(descriptor, &buffer, wanted)
                        if count < 0 && errno == EINTR { continue }
                        if count <= 0 { break }
                        data.append(contentsOf: buffer[..<count])
                    }
                    close(descriptor)
                }
                bytesContinuation.yield(data)
                bytesContinuation.finish()
            }.start()
            opened = Task { for await _ in openedStream {} }
            bytes = Task {
                var data = Data()
                for await chunk in bytesStream { data = chunk }
                return data
            }
        }

        /// What the reader read, once the writer has exited.
        ///
        /// A reader still waiting in open(2) because the writer never opened the FIFO is let through
        /// and reads nothing.
        func finish() async -> Data {
            // A writer that replaced the FIFO left the reader blocked on the old one for good: it read nothing.
            guard FileNodes.type(URL(fileURLWithPath: path)) == S_IFIFO else { return Data() }
            // A writer of our own lets a blocked open(2) return; closing it ends the reader's read.
            let keeper = open(path, O_RDWR | O_CLOEXEC)
            await opened.value
            if keeper >= 0 { close(keeper) }
            return await bytes.value
        }
    }
#endif
#if Tool && canImport(Glibc)
    /// A Unix-domain stream socket listening at a path, whose one accepted connection is read to the
    /// end on a thread of its own.
    final class SocketReader: Sendable {
        private let path: String
        private let listener: Int32
        private let bytes: Task<Data, Never>

        init(_ url: URL) throws {
            path = url.path
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard listener >= 0 else { throw FileNodes.SystemCallFailed("socket") }
            guard Self.withAddress(url.path, { bind(listener, $0, $1) }) == 0, Glibc.listen(listener, 4) == 0 else {
                close(listener)
                throw FileNodes.SystemCallFailed("bind")
            }
            self.listener = listener
            let (stream, continuation) = AsyncStream<Data>.makeStream()
            Thread {
                var data = Data()
                let connection = accept(listener, nil, nil)
                if connection >= 0 {
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while true {
                        let count = read(connection, &buffer, buffer.count)
                        if count < 0 && errno == EINTR { continue }
                        if count <= 0 { break }
                        data.append(contentsOf: buffer[..<count])
                    }
                    close(connection)
                }
                continuation.yield(data)
                continuation.finish()
            }.start()
            bytes = Task {
                var data = Data()
                for await chunk in stream { data = chunk }
                return data
            }
        }

        /// What the accepted connection carried, once the writer has exited; a reader still waiting
        /// for a connection gets an empty one of ours.
        func finish() async -> Data {
            // A writer that replaced the socket left the reader waiting on the old one for good.
            guard FileNodes.type(URL(fileURLWithPath: path)) == S_IFSOCK else { return Data() }
            let client = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            _ = Self.withAddress(path) { connect(client, $0, $1) }
            close(client)
            let data = await bytes.value
            close(listener)
            return data
        }

        private static func withAddress(
            _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
        ) -> Int32 {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                buffer.copyBytes(from: bytes.prefix(buffer.count - 1))
            }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }
#endif
