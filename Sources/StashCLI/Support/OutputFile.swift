#if Tool
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Where a command writes the bytes it was asked for with `-o PATH`, without ever replacing what
    /// the tool does not own.
    ///
    /// * `-` is standard output.
    /// * An existing character or block device, FIFO or socket is opened and written in place, as
    ///   `cat > PATH` would: the node stays what it is (a `-o /dev/null` run as root used to turn the
    ///   device into a regular file for the whole machine).
    /// * A symbolic link is written through: what it points to is written (a device or FIFO in place,
    ///   a regular file replaced atomically) and the link stays. A link to nothing is refused, as `cp`
    ///   refuses to write through a dangling link.
    /// * Only a new path or an existing regular file is replaced atomically: the bytes go to a
    ///   temporary file in the same directory, which `rename(2)` puts in place, with the replaced
    ///   file's permissions. A reader sees the old bytes or the new, never part of them.
    ///
    /// A destination that cannot be written (a directory, a missing parent, no permission) is
    /// reported before anything is written, naming the path and what to do, and nothing changes.
    struct OutputFile {
        /// The path as the user gave it, or `-`.
        let path: String
        /// What is written, for messages ("'photo'", "the body of https://…").
        let subject: String

        /// What `path` names now.
        enum Destination: Equatable {
            /// Standard output (`-`).
            case standardOutput
            /// An existing device, FIFO or socket, written in place at `path`.
            case inPlace(Kind)
            /// A new or regular file at `file` (the link's target for a link), replaced atomically;
            /// `existing` is its current identity, or nil when there is no file yet.
            case replaced(file: String, existing: Identity?)
        }

        /// The kinds of file written in place.
        enum Kind: Equatable {
            case characterDevice, blockDevice, fifo, socket

            var name: String {
                switch self {
                case .characterDevice: "a character device"
                case .blockDevice: "a block device"
                case .fifo: "a FIFO"
                case .socket: "a socket"
                }
            }
        }

        /// A regular file's identity and permissions, to notice a swap and to keep its mode.
        struct Identity: Equatable {
            var device: UInt64
            var inode: UInt64
            var mode: mode_t
            var owner: uid_t
            var group: gid_t
        }

        /// Checks that `path` can be written, before any work is done.
        ///
        /// - Parameters:
        ///   - path: `-` for standard output, or a path.
        ///   - subject: What will be written, for messages.
        /// - Throws: ``CLIError`` (status 74) naming the path and what to do when it cannot be written.
        init(path: String, for subject: String) throws {
            self.path = path
            self.subject = subject
            _ = try destination()
        }

        /// Whether the bytes go to standard output.
        var isStandardOutput: Bool { path == "-" }

        /// Writes `data` to the destination: in place, or by an atomic replacement.
        ///
        /// - Throws: ``CLIError`` (status 74) naming the path and what to do. A replaced file is then
        ///   unchanged; a device, FIFO or socket may have received part of the bytes.
        func write(_ data: Data) throws {
            switch try destination() {
            case .standardOutput:
                try data.withUnsafeBytes { try writeAll($0, to: STDOUT_FILENO, into: "standard output") }
            case .inPlace(let kind):
                try writeInPlace(data, kind: kind)
            case .replaced(let file, let existing):
                try replace(file, existing: existing, with: data)
            }
        }

        // MARK: - Classifying the path

        /// What the path names now, or the error that says why it cannot be written.
        func destination() throws -> Destination {
            if path == "-" { return .standardOutput }
            guard !path.isEmpty else {
                throw fail("the path is empty", remedy: "give a file's path, or - for standard output")
            }
            var link = stat()
            guard lstat(path, &link) == 0 else {
                let error = errno
                guard error == ENOENT else { throw fail(errno: error, at: path) }
                try checkParent(of: path)
                return .replaced(file: path, existing: nil)
            }
            var target = link
            var file = path
            if Self.type(link) == S_IFLNK {
                guard stat(path, &target) == 0 else {
                    let error = errno
                    if error == ENOENT {
                        let pointee = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                        throw fail(
                            "it is a symbolic link to \(pointee), which does not exist (stash writes through a link only to an existing file)",
                            remedy: "create the target or remove the link")
                    }
                    throw fail(errno: error, at: path)
                }
                guard let resolved = realpath(path, nil) else { throw fail(errno: errno, at: path) }
                file = String(cString: resolved)
                free(resolved)
            }
            switch Self.type(target) {
            case S_IFCHR: return .inPlace(.characterDevice)
            case S_IFBLK: return .inPlace(.blockDevice)
            case S_IFIFO: return .inPlace(.fifo)
            case S_IFSOCK: return .inPlace(.socket)
            case S_IFDIR:
                throw fail("it is a directory", remedy: "give the path of a file to write, such as \(path)/NAME")
            case S_IFREG:
                let identity = Identity(target)
                if faccessat(AT_FDCWD, file, W_OK, AT_EACCESS) != 0 {
                    throw fail(
                        "\(file == path ? "the file" : file) is not writable (\(String(cString: strerror(errno)))), and stash does not replace a file it may not write",
                        remedy: "change its permissions or choose another path")
                }
                try checkParent(of: file, replacing: true)
                return .replaced(file: file, existing: identity)
            default:
                throw fail("it is neither a file, a device, a FIFO nor a socket", remedy: "choose another path")
            }
        }

        /// Checks that the directory holding `file` exists and takes a new file.
        private func checkParent(of file: String, replacing: Bool = false) throws {
            let parent = Self.directory(of: file)
            var info = stat()
            guard stat(parent, &info) == 0 else {
                let error = errno
                if error == ENOENT {
                    throw fail(
                        "the directory \(parent) does not exist",
                        remedy: "create it (mkdir -p \(parent)) or choose another path")
                }
                throw fail(errno: error, at: parent)
            }
            guard Self.type(info) == S_IFDIR else {
                throw fail("\(parent) is not a directory", remedy: "choose a path inside a directory")
            }
            guard faccessat(AT_FDCWD, parent, W_OK | X_OK, AT_EACCESS) == 0 else {
                let reason = String(cString: strerror(errno))
                if replacing {
                    throw fail(
                        "the file cannot be replaced atomically: its directory \(parent) does not take new files (\(reason))",
                        remedy: "write in place with '-o - > \(file)', or choose a writable directory")
                }
                throw fail(
                    "cannot create a file in \(parent) (\(reason))",
                    remedy: "choose a directory you may write to, or change its permissions")
            }
        }

        // MARK: - Writing in place

        /// Opens the device, FIFO or socket at `path` and writes `data` into it; nothing is truncated,
        /// created or renamed.
        private func writeInPlace(_ data: Data, kind: Kind) throws {
            // Opening a FIFO blocks until a reader opens it, as `cat > FIFO` does.
            let descriptor: Int32
            if kind == .socket {
                descriptor = try connectToSocket()
            } else {
                descriptor = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
            }
            guard descriptor >= 0 else { throw fail(errno: errno, at: path) }
            var closed = false
            defer { if !closed { close(descriptor) } }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw fail(errno: errno, at: path) }
            // The path may have been swapped for another kind of file between the check and the open.
            guard [S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK].contains(Self.type(info)) else {
                throw fail("it changed while stash opened it", remedy: "run the command again")
            }
            try Self.withSIGPIPEBlocked(on: descriptor) {
                try data.withUnsafeBytes { try writeAll($0, to: descriptor, into: "\(kind.name) at \(path)") }
            }
            // A block device's writes sit in the page cache until synced.
            if kind == .blockDevice, Self.sync(descriptor) != 0 { throw fail(errno: errno, at: path) }
            closed = true
            if close(descriptor) != 0, errno != EINTR { throw fail(errno: errno, at: path) }
        }

        /// Flushes `descriptor` to the drive: on Apple platforms `fsync` leaves the data in the
        /// drive's cache, so `F_FULLFSYNC` is tried first (`fsync` where the file system refuses it).
        static func sync(_ descriptor: Int32) -> Int32 {
            #if canImport(Darwin)
                if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
            #endif
            return fsync(descriptor)
        }

        /// A stream connection to the Unix-domain socket at `path`.
        private func connectToSocket() throws -> Int32 {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            guard bytes.count < capacity else {
                throw fail("the socket's path is longer than \(capacity - 1) bytes", remedy: "use a shorter path")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                buffer.copyBytes(from: bytes)
                buffer[bytes.count] = 0
            }
            #if canImport(Darwin)
                let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
            #else
                let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            #endif
            guard descriptor >= 0 else { throw fail(errno: errno, at: path) }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard status == 0 else {
                let error = errno
                close(descriptor)
                if error == ECONNREFUSED {
                    throw fail("no program is listening on the socket", remedy: "start the program that reads it first")
                }
                if error == EPROTOTYPE {
                    throw fail("it is not a stream socket", remedy: "stash writes only to stream sockets")
                }
                throw fail(errno: error, at: path)
            }
            return descriptor
        }

        /// Writes every byte, through short writes, interruptions and a non-blocking descriptor.
        private func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, into place: String) throws {
            guard var pointer = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = Foundation.write(descriptor, pointer, min(remaining, 1 << 20))
                if written < 0 {
                    let error = errno
                    switch error {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK:
                        var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&ready, 1, -1)
                        continue
                    case EPIPE:
                        throw CLIError.io(
                            "Cannot write \(subject) to \(place): its reader closed it after \(buffer.count - remaining) of \(buffer.count) bytes. Keep the reader open until stash exits."
                        )
                    default:
                        throw CLIError.io(
                            "Cannot write \(subject) to \(place) after \(buffer.count - remaining) of \(buffer.count) bytes: \(String(cString: strerror(error)))."
                        )
                    }
                }
                pointer += written
                remaining -= written
            }
        }

        /// Runs `body` with SIGPIPE blocked on this thread, so that a reader that goes away is an
        /// `EPIPE` to report rather than a silent death; a SIGPIPE the writes raised is consumed.
        private static func withSIGPIPEBlocked(on descriptor: Int32, _ body: () throws -> Void) throws {
            #if canImport(Darwin)
                _ = fcntl(descriptor, F_SETNOSIGPIPE, 1)
                try body()
            #else
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                var previous = sigset_t()
                pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
                var pending = sigset_t()
                sigpending(&pending)
                let wasPending = sigismember(&pending, SIGPIPE) == 1
                defer {
                    sigpending(&pending)
                    if !wasPending, sigismember(&pending, SIGPIPE) == 1 {
                        var now = timespec(tv_sec: 0, tv_nsec: 0)
                        _ = sigtimedwait(&pipeSignal, nil, &now)
                    }
                    pthread_sigmask(SIG_SETMASK, &previous, nil)
                }
                try body()
            #endif
        }

        // MARK: - Replacing a regular file

        /// Writes `data` to a new file beside `file` and renames it over `file`; on failure the
        /// temporary file is removed and `file` is untouched.
        private func replace(_ file: String, existing: Identity?, with data: Data) throws {
            let directory = Self.directory(of: file)
            let name = (file as NSString).lastPathComponent
            let temporary = "\(directory)/.\(name).stash-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
            // 0666 less the umask, as any new file; a replaced file keeps its permissions below.
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            guard descriptor >= 0 else { throw fail(errno: errno, at: directory) }
            var published = false
            defer { if !published { unlink(temporary) } }
            do {
                defer { close(descriptor) }
                if let existing {
                    guard fchmod(descriptor, existing.mode & 0o777) == 0 else {
                        throw fail(errno: errno, at: temporary)
                    }
                    // Root keeps the replaced file's owner, as `cp` over it would. A refusal (a file
                    // system without owners) leaves the new file root's, which is no reason to fail.
                    if geteuid() == 0 { _ = fchown(descriptor, existing.owner, existing.group) }
                }
                try data.withUnsafeBytes { try writeAll($0, to: descriptor, into: temporary) }
                // Durable before it is visible: a crash never leaves an empty file under the name.
                guard Self.sync(descriptor) == 0 else { throw fail(errno: errno, at: temporary) }
            }
            // Refuse to rename over something that appeared or was swapped in since the check.
            var now = stat()
            let current: Identity? = lstat(file, &now) == 0 ? Identity(now) : nil
            guard current == existing else {
                throw fail("it changed while stash wrote it", remedy: "run the command again")
            }
            guard rename(temporary, file) == 0 else { throw fail(errno: errno, at: file) }
            published = true
        }

        // MARK: - Helpers

        private static func type(_ info: stat) -> mode_t { info.st_mode & S_IFMT }

        private static func directory(of file: String) -> String {
            let parent = (file as NSString).deletingLastPathComponent
            return parent.isEmpty ? "." : parent
        }

        /// "Cannot write SUBJECT to PATH: WHAT. REMEDY."
        private func fail(_ what: String, remedy: String) -> CLIError {
            .io("Cannot write \(subject) to \(path): \(what). \(remedy.prefix(1).uppercased())\(remedy.dropFirst()).")
        }

        /// The failure of a system call on `place`, with the remedy its errno calls for.
        private func fail(errno error: Int32, at place: String) -> CLIError {
            let reason = String(cString: strerror(error))
            let remedy =
                switch error {
                case EACCES, EPERM: "check the permissions of \(place) and of the directories above it"
                case ENOENT, ENOTDIR: "check that every directory in \(place) exists"
                case ENOSPC, EDQUOT: "free some space on the disk of \(place)"
                case EROFS: "choose a path on a writable file system"
                default: "check \(place)"
                }
            return fail(place == path ? reason.lowercased() : "\(place): \(reason.lowercased())", remedy: remedy)
        }
    }

    extension OutputFile.Identity {
        init(_ info: stat) {
            self.init(
                device: UInt64(info.st_dev), inode: UInt64(info.st_ino), mode: info.st_mode, owner: info.st_uid,
                group: info.st_gid)
        }
    }
#endif
