#if Tool
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `-o PATH` writes what it may and replaces only what it owns.
    ///
    /// Standard output, devices, FIFOs and links are written in place or through, only new and
    /// regular files are replaced (atomically), and refusals change nothing. Devices are private
    /// nodes made with mknod(2) in the test's directory, never the machine's `/dev/null`.
    @Suite struct OutputFileTests {
        private static func bytes(_ count: Int, seed: UInt8 = 1) -> Data {
            Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
        }

        /// A cache at `root/cache` holding `value` under `k`, made by the user `prefix` runs as.
        private static func cache(in root: URL, holding value: Data, prefix: [String] = []) async throws -> URL {
            let dir = root.appendingPathComponent("cache")
            let put = try await StashTool.run(["put", "k", "--dir", dir.path], input: value, prefix: prefix)
            try #require(put.status == 0, "\(put.error)")
            return dir
        }

        private static func get(_ output: String, from dir: URL, prefix: [String] = []) async throws
            -> StashTool.Result
        {
            try await StashTool.run(["get", "k", "-o", output, "--dir", dir.path], prefix: prefix)
        }

        @Test func dashWritesTheValueToStandardOutputAndCreatesNoFile() async throws {
            try await withTemporaryDirectory { root in
                let value = Self.bytes(70_000)
                let dir = try await Self.cache(in: root, holding: value)
                let dashExisted = FileManager.default.fileExists(atPath: "-")
                let result = try await Self.get("-", from: dir)
                #expect(result.status == 0)
                #expect(result.output == value)
                #expect(result.error == "")
                #expect(FileManager.default.fileExists(atPath: "-") == dashExisted)

                let json = try await StashTool.run(["get", "k", "-o", "-", "--json", "--dir", dir.path])
                #expect(json.status == 64)
                #expect(json.output.isEmpty)
                #expect(
                    json.error
                        == "stash: --json and -o - would both write to standard output: give -o a file, or drop one of them. Run 'stash get --help' for usage.\n"
                )
            }
        }

        @Test(.enabled(if: getuid() == 0, "mknod(2) of a device node needs root"))
        func aCharacterDeviceIsWrittenInPlaceAndStaysADevice() async throws {
            try await withTemporaryDirectory { root in
                let value = Self.bytes(200_000)
                let dir = try await Self.cache(in: root, holding: value)
                let null = root.appendingPathComponent("null")
                try FileNodes.makeNullDevice(at: null)
                let device = FileNodes.device(null)

                let result = try await Self.get(null.path, from: dir)
                #expect(result.status == 0, "\(result.error)")
                #expect(result.text == "wrote 'k' (200.0 KB) to \(null.path)\n")
                #expect(FileNodes.type(null) == S_IFCHR)
                #expect(FileNodes.device(null) == device)
                #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["cache", "null"])
            }
        }

        #if os(Linux)
            /// The bytes written into a character device arrive, unchanged.
            ///
            /// A null device swallows what it is given; a pseudo-terminal of the test's own shows on its
            /// other end that every byte arrived. A node made with mknod(2) outside devpts cannot open a
            /// pseudo-terminal (EIO), so a link in the test's directory leads to it.
            @Test func theBytesWrittenIntoACharacterDeviceThroughALinkArriveUnchanged() async throws {
                try await withTemporaryDirectory { root in
                    // Less than a pseudo-terminal buffers (about 18 KiB), so that stash never waits for a reader.
                    let value = Self.bytes(8_000)
                    let dir = try await Self.cache(in: root, holding: value)
                    // posix_openpt(3) and ptsname(3) are not in Swift's Glibc module: their ioctls instead
                    // (TIOCSPTLCK and TIOCGPTN, in the encoding of x86-64 and arm64; grantpt is a no-op on devpts).
                    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
                    try #require(master >= 0)
                    defer { close(master) }
                    var locked: Int32 = 0
                    var number: UInt32 = 0
                    try #require(ioctl(master, 0x4004_5431, &locked) == 0 && ioctl(master, 0x8004_5430, &number) == 0)
                    let slavePath = "/dev/pts/\(number)"
                    let slave = open(slavePath, O_RDWR | O_NOCTTY)
                    try #require(slave >= 0)
                    defer { close(slave) }
                    var settings = termios()
                    try #require(tcgetattr(slave, &settings) == 0)
                    cfmakeraw(&settings)
                    try #require(tcsetattr(slave, TCSANOW, &settings) == 0)
                    var info = stat()
                    try #require(fstat(slave, &info) == 0)
                    let terminal = root.appendingPathComponent("terminal")
                    try FileManager.default.createSymbolicLink(atPath: terminal.path, withDestinationPath: slavePath)

                    let result = try await Self.get(terminal.path, from: dir)
                    #expect(result.status == 0, "\(result.error)")
                    #expect(FileNodes.type(terminal) == S_IFLNK)
                    #expect(FileNodes.type(URL(fileURLWithPath: slavePath)) == S_IFCHR)
                    #expect(FileNodes.device(URL(fileURLWithPath: slavePath)) == info.st_rdev)
                    _ = fcntl(master, F_SETFL, O_NONBLOCK)
                    var received = Data()
                    var buffer = [UInt8](repeating: 0, count: 65_536)
                    while true {
                        let count = read(master, &buffer, buffer.count)
                        if count <= 0 { break }
                        received.append(contentsOf: buffer[..<count])
                    }
                    #expect(received == value)
                }
            }
        #endif

        @Test func aFIFOIsWrittenInPlaceForItsReaderAndStaysAFIFO() async throws {
            try await withTemporaryDirectory { root in
                // Several times a pipe's buffer, so that the writes are short and wait for the reader.
                let value = Self.bytes(1_000_000)
                let dir = try await Self.cache(in: root, holding: value)
                let fifo = root.appendingPathComponent("fifo")
                try FileNodes.makeFIFO(at: fifo)
                let reader = FIFOReader(fifo)

                let result = try await Self.get(fifo.path, from: dir)
                let read = await reader.finish()
                #expect(result.status == 0, "\(result.error)")
                #expect(result.text == "wrote 'k' (1.0 MB) to \(fifo.path)\n")
                #expect(read == value)
                #expect(FileNodes.type(fifo) == S_IFIFO)
            }
        }

        @Test func aFIFOReaderThatLeavesEarlyIsAnErrorNotASilentDeath() async throws {
            try await withTemporaryDirectory { root in
                let value = Self.bytes(4_000_000)
                let dir = try await Self.cache(in: root, holding: value)
                let fifo = root.appendingPathComponent("fifo")
                try FileNodes.makeFIFO(at: fifo)
                let reader = FIFOReader(fifo, limit: 10)

                let result = try await Self.get(fifo.path, from: dir)
                let read = await reader.finish()
                #expect(read == value.prefix(10))
                // Killed by SIGPIPE, the status would be the signal's number (13).
                #expect(result.status == 74)
                #expect(result.output.isEmpty)
                #expect(
                    result.error.hasPrefix(
                        "stash: Cannot write 'k' to a FIFO at \(fifo.path): its reader closed it after "))
                #expect(result.error.hasSuffix(" of 4000000 bytes. Keep the reader open until stash exits.\n"))
                #expect(FileNodes.type(fifo) == S_IFIFO)
            }
        }

        #if canImport(Glibc)
            @Test func aSocketIsConnectedToAndWrittenAndStaysASocket() async throws {
                try await withTemporaryDirectory { root in
                    let value = Self.bytes(500_000)
                    let dir = try await Self.cache(in: root, holding: value)
                    let path = root.appendingPathComponent("socket")
                    let reader = try SocketReader(path)

                    let result = try await Self.get(path.path, from: dir)
                    #expect(await reader.finish() == value)
                    #expect(result.status == 0, "\(result.error)")
                    #expect(result.text == "wrote 'k' (500.0 KB) to \(path.path)\n")
                    #expect(FileNodes.type(path) == S_IFSOCK)
                }
            }
        #endif

        @Test func aLinkIsWrittenThroughToItsTargetAndStaysALink() async throws {
            try await withTemporaryDirectory { root in
                let value = Self.bytes(50_000)
                let dir = try await Self.cache(in: root, holding: value)
                let target = root.appendingPathComponent("target.bin")
                try Data("old".utf8).write(to: target)
                try #require(chmod(target.path, 0o640) == 0)
                let link = root.appendingPathComponent("link.bin")
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "target.bin")

                let result = try await Self.get(link.path, from: dir)
                #expect(result.status == 0, "\(result.error)")
                #expect(result.text == "wrote 'k' (50.0 KB) to \(link.path)\n")
                #expect(FileNodes.type(link) == S_IFLNK)
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "target.bin")
                #expect(try Data(contentsOf: target) == value)
                #expect(FileNodes.inodeAndMode(target)?.mode == 0o640)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
                        == ["cache", "link.bin", "target.bin"])

                // A link to a FIFO is written through too: the reader gets the bytes.
                let fifo = root.appendingPathComponent("fifo")
                try FileNodes.makeFIFO(at: fifo)
                let fifoLink = root.appendingPathComponent("fifo-link")
                try FileManager.default.createSymbolicLink(atPath: fifoLink.path, withDestinationPath: fifo.path)
                let reader = FIFOReader(fifo)
                let throughLink = try await Self.get(fifoLink.path, from: dir)
                #expect(await reader.finish() == value)
                #expect(throughLink.status == 0, "\(throughLink.error)")
                #expect(FileNodes.type(fifoLink) == S_IFLNK)
                #expect(FileNodes.type(fifo) == S_IFIFO)
            }
        }

        @Test func aLinkToNothingIsRefusedAndLeftAsItIs() async throws {
            try await withTemporaryDirectory { root in
                let dir = try await Self.cache(in: root, holding: Self.bytes(100))
                let link = root.appendingPathComponent("dangling")
                try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "missing.bin")

                let result = try await Self.get(link.path, from: dir)
                #expect(result.status == 74)
                #expect(result.output.isEmpty)
                #expect(
                    result.error
                        == "stash: Cannot write 'k' to \(link.path): it is a symbolic link to missing.bin, which does not exist (stash writes through a link only to an existing file). Create the target or remove the link.\n"
                )
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "missing.bin")
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["cache", "dangling"])
            }
        }

        /// The new bytes arrive under a new inode by rename(2): a hard link to the old file keeps the old
        /// bytes, which an in-place truncation would have destroyed, and no temporary file is left.
        @Test func aRegularFileIsReplacedAtomicallyKeepingItsPermissions() async throws {
            try await withTemporaryDirectory { root in
                let value = Self.bytes(30_000)
                let dir = try await Self.cache(in: root, holding: value)
                let file = root.appendingPathComponent("copy.bin")
                try Data("old bytes".utf8).write(to: file)
                try #require(chmod(file.path, 0o600) == 0)
                let before = try #require(FileNodes.inodeAndMode(file))
                let hardLink = root.appendingPathComponent("old.bin")
                try #require(link(file.path, hardLink.path) == 0)

                let result = try await Self.get(file.path, from: dir)
                #expect(result.status == 0, "\(result.error)")
                #expect(try Data(contentsOf: file) == value)
                let after = try #require(FileNodes.inodeAndMode(file))
                #expect(after.inode != before.inode)
                #expect(after.mode == 0o600)
                #expect(try Data(contentsOf: hardLink) == Data("old bytes".utf8))
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
                        == ["cache", "copy.bin", "old.bin"])

                let created = root.appendingPathComponent("new.bin")
                #expect(try await Self.get(created.path, from: dir).status == 0)
                #expect(try Data(contentsOf: created) == value)
                #expect(FileNodes.type(created) == S_IFREG)
            }
        }

        @Test func aDirectoryOrAMissingDirectoryIsRefusedAndNothingChanges() async throws {
            try await withTemporaryDirectory { root in
                let dir = try await Self.cache(in: root, holding: Self.bytes(100))
                let folder = root.appendingPathComponent("folder")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
                try Data("kept".utf8).write(to: folder.appendingPathComponent("inside"))

                let intoFolder = try await Self.get(folder.path, from: dir)
                #expect(intoFolder.status == 74)
                #expect(intoFolder.output.isEmpty)
                #expect(
                    intoFolder.error
                        == "stash: Cannot write 'k' to \(folder.path): it is a directory. Give the path of a file to write, such as \(folder.path)/NAME.\n"
                )
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["inside"])

                let missing = root.appendingPathComponent("missing")
                let intoMissing = try await Self.get(missing.appendingPathComponent("out.bin").path, from: dir)
                #expect(intoMissing.status == 74)
                #expect(
                    intoMissing.error
                        == "stash: Cannot write 'k' to \(missing.path)/out.bin: the directory \(missing.path) does not exist. Create it (mkdir -p \(missing.path)) or choose another path.\n"
                )
                #expect(FileNodes.type(missing) == nil)
                #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["cache", "folder"])
            }
        }

        /// Root may write anywhere, so the refusals are made by the unprivileged user nobody.
        @Test(.enabled(if: FileNodes.asNobody != nil, "needs root and setpriv to run stash as nobody"))
        func withoutPermissionNothingIsWrittenOrReplaced() async throws {
            let nobody = try #require(FileNodes.asNobody)
            try await withTemporaryDirectory { root in
                try FileNodes.makeWorldWritable(root)
                let dir = try await Self.cache(in: root, holding: Self.bytes(100), prefix: nobody)
                let closed = root.appendingPathComponent("closed")
                try FileManager.default.createDirectory(at: closed, withIntermediateDirectories: false)
                try #require(chmod(closed.path, 0o755) == 0)
                let readOnly = root.appendingPathComponent("read-only.bin")
                try Data("kept".utf8).write(to: readOnly)
                try #require(chmod(readOnly.path, 0o644) == 0)
                let before = try #require(FileNodes.inodeAndMode(readOnly))

                let intoClosed = try await Self.get(
                    closed.appendingPathComponent("out.bin").path, from: dir, prefix: nobody)
                #expect(intoClosed.status == 74)
                #expect(
                    intoClosed.error
                        == "stash: Cannot write 'k' to \(closed.path)/out.bin: cannot create a file in \(closed.path) (Permission denied). Choose a directory you may write to, or change its permissions.\n"
                )
                #expect(try FileManager.default.contentsOfDirectory(atPath: closed.path) == [])

                // The directory would let nobody rename over the file; stash still refuses, as cp would.
                let overReadOnly = try await Self.get(readOnly.path, from: dir, prefix: nobody)
                #expect(overReadOnly.status == 74)
                #expect(
                    overReadOnly.error
                        == "stash: Cannot write 'k' to \(readOnly.path): the file is not writable (Permission denied), and stash does not replace a file it may not write. Change its permissions or choose another path.\n"
                )
                #expect(try Data(contentsOf: readOnly) == Data("kept".utf8))
                #expect(FileNodes.inodeAndMode(readOnly)?.inode == before.inode)
                #expect(
                    try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
                        == ["cache", "closed", "read-only.bin"])
            }
        }

        /// An unprivileged user writes where it may, with no rename over a node it cannot own.
        ///
        /// As another user `-o /dev/null` used to fail, as root it replaced the device: here the
        /// same writes as nobody, into a world-writable FIFO and device node.
        @Test(.enabled(if: FileNodes.asNobody != nil, "needs root and setpriv to run stash as nobody"))
        func anUnprivilegedUserWritesIntoDevicesFIFOsAndStandardOutput() async throws {
            let nobody = try #require(FileNodes.asNobody)
            try await withTemporaryDirectory { root in
                try FileNodes.makeWorldWritable(root)
                let value = Self.bytes(300_000)
                let dir = try await Self.cache(in: root, holding: value, prefix: nobody)

                let null = root.appendingPathComponent("null")
                try FileNodes.makeNullDevice(at: null)
                let device = FileNodes.device(null)
                let intoDevice = try await Self.get(null.path, from: dir, prefix: nobody)
                #expect(intoDevice.status == 0, "\(intoDevice.error)")
                #expect(FileNodes.type(null) == S_IFCHR)
                #expect(FileNodes.device(null) == device)

                let fifo = root.appendingPathComponent("fifo")
                try FileNodes.makeFIFO(at: fifo)
                let reader = FIFOReader(fifo)
                let intoFIFO = try await Self.get(fifo.path, from: dir, prefix: nobody)
                #expect(await reader.finish() == value)
                #expect(intoFIFO.status == 0, "\(intoFIFO.error)")
                #expect(FileNodes.type(fifo) == S_IFIFO)

                let toOutput = try await Self.get("-", from: dir, prefix: nobody)
                #expect(toOutput.status == 0, "\(toOutput.error)")
                #expect(toOutput.output == value)
            }
        }

        @Test func fetchWritesThroughTheSameRulesAndDownloadsNothingForABadOutput() async throws {
            try await withOriginServer { server in
                try await withTemporaryDirectory { root in
                    let dir = root.appendingPathComponent("cache")
                    let url = server.url("/files/a-300000")
                    let missing = root.appendingPathComponent("missing")
                    let refused = try await StashTool.run(
                        ["fetch", url, "-o", missing.appendingPathComponent("out.bin").path, "--dir", dir.path])
                    #expect(refused.status == 74)
                    #expect(
                        refused.error
                            == "stash: Cannot write the body of \(url) to \(missing.path)/out.bin: the directory \(missing.path) does not exist. Create it (mkdir -p \(missing.path)) or choose another path.\n"
                    )
                    #expect(server.served.requests == 0)

                    let fifo = root.appendingPathComponent("fifo")
                    try FileNodes.makeFIFO(at: fifo)
                    let reader = FIFOReader(fifo)
                    let fetched = try await StashTool.run(["fetch", url, "-o", fifo.path, "--dir", dir.path])
                    #expect(await reader.finish() == OriginServer.body("/files/a-300000"))
                    #expect(fetched.status == 0, "\(fetched.error)")
                    #expect(fetched.text.hasSuffix("  written to \(fifo.path)\n"))
                    #expect(FileNodes.type(fifo) == S_IFIFO)
                    #expect(server.served.requests == 1)
                }
            }
        }
    }
#endif
