import CStashVFS
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin wrappers over the POSIX calls the disk tier needs, throwing `POSIXErrorCode`.
///
/// Foundation's file APIs are avoided on the hot path: `Data.write(.atomic)` fsyncs on every
/// call on Linux and `FileManager.replaceItemAt` is unreliable there; `rename(2)` is atomic.
enum POSIXFile {
    static func error(_ operation: String) -> POSIXErrorCode {
        POSIXErrorCode(operation: operation, errno: errno)
    }

    /// Creates `path` and any missing parents with `mode`; an existing directory is fine.
    static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(POSIXErrorCode) {
        if mkdir(path, mode) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw error("mkdir \(path)") }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { throw error("mkdir \(path)") }
        try makeDirectory(parent, mode: mode)
        if mkdir(path, mode) != 0 && errno != EEXIST { throw error("mkdir \(path)") }
    }

    /// Opens a new file for writing that no one else has, holding an exclusive `flock` on it.
    ///
    /// The lock tells the orphan collector, in this or any other process, that the file is
    /// still being written; the kernel drops it when the writer exits, even on SIGKILL. The
    /// collector may win the race between `open` and `flock` and unlink the file: then this
    /// returns `nil` and the caller tries another name.
    ///
    /// The file's mode is 0666 less the process's umask, as SQLite creates the index's files
    /// (and python-diskcache its values): a cache that its owner makes readable to others is
    /// readable, values included.
    static func createLocked(_ path: String) throws(POSIXErrorCode) -> Int32? {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw error("open \(path)") }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let failure = error("flock \(path)")
            close(fd)
            throw failure
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink > 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(POSIXErrorCode) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(fd, pointer, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                throw error("write \(path)")
            }
            pointer += written
            remaining -= written
        }
    }

    /// Flushes the file's data and metadata to stable storage.
    ///
    /// On Apple platforms `fsync` only hands the data to the drive, whose cache can still lose it
    /// on power loss; `F_FULLFSYNC` makes the drive write its cache out too. A file system that
    /// does not support it (some network and FUSE ones) gets `fsync`, the most it offers.
    static func sync(_ fd: Int32, path: String) throws(POSIXErrorCode) {
        #if canImport(Darwin)
            if fcntl(fd, F_FULLFSYNC) != -1 { return }
        #endif
        if fsync(fd) != 0 { throw error("fsync \(path)") }
    }

    /// Fsyncs a directory so that a rename inside it survives power loss.
    static func syncDirectory(_ path: String) throws(POSIXErrorCode) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open \(path)") }
        defer { close(fd) }
        try sync(fd, path: path)
    }

    static func rename(_ from: String, _ to: String) throws(POSIXErrorCode) {
        if Foundation.rename(from, to) != 0 { throw error("rename \(from) -> \(to)") }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func remove(_ path: String) throws(POSIXErrorCode) {
        if unlink(path) != 0 && errno != ENOENT { throw error("unlink \(path)") }
    }

    /// The result of reading a value file.
    enum ReadResult {
        case bytes(Data)
        case missing
        case wrongSize(actual: Int)
    }

    /// Reads a whole file whose size must be `expectedSize`: ``openForReading(_:expectedSize:)``
    /// and then ``read(_:offset:count:)`` of every byte.
    static func read(_ path: String, expectedSize: Int) throws(POSIXErrorCode) -> ReadResult {
        switch try openForReading(path, expectedSize: expectedSize) {
        case .missing: return .missing
        case .wrongSize(let actual): return .wrongSize(actual: actual)
        case .opened(let fd):
            defer { close(fd) }
            let bytes = try read(fd, offset: 0, count: expectedSize)
            // The file shrank between the fstat and the read.
            guard bytes.count == expectedSize else { return .wrongSize(actual: bytes.count) }
            return .bytes(bytes)
        }
    }

    /// The result of opening a value file.
    enum OpenResult {
        case opened(Int32)
        case missing
        case wrongSize(actual: Int)
    }

    /// Opens a regular file of `expectedSize` bytes for reading.
    ///
    /// A directory or device where a value file should be is as good as a missing file.
    static func openForReading(_ path: String, expectedSize: Int) throws(POSIXErrorCode) -> OpenResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return .missing }
            throw error("open \(path)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = error("fstat \(path)")
            close(fd)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .missing
        }
        guard Int(info.st_size) == expectedSize else {
            close(fd)
            return .wrongSize(actual: Int(info.st_size))
        }
        return .opened(fd)
    }

    /// `count` bytes of an open file from `offset`, with `pread(2)`; fewer at its end.
    ///
    /// Plain malloc, not Data(count:) (calloc) or posix_memalign: for megabyte buffers those map
    /// fresh zero pages on every call, and the page faults cost 10x the read itself; glibc's malloc
    /// reuses freed memory once its dynamic mmap threshold has adapted.
    static func read(_ fd: Int32, offset: Int, count: Int) throws(POSIXErrorCode) -> Data {
        guard count > 0 else { return Data() }
        guard let buffer = malloc(count) else {
            throw POSIXErrorCode(operation: "allocate \(count) bytes", errno: ENOMEM)
        }
        var done = 0
        while done < count {
            let n = pread(fd, buffer + done, count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                let failure = error("pread")
                free(buffer)
                throw failure
            }
            if n == 0 { break }
            done += n
        }
        return Data(bytesNoCopy: buffer, count: done, deallocator: .free)
    }

    /// `st_size` and the bytes allocated on disk (`st_blocks * 512`), or `nil` if absent.
    static func size(_ path: String) -> (logical: Int, allocated: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (Int(info.st_size), Int(info.st_blocks) * 512)
    }

    /// The inode of `path`, or `nil` when it does not exist.
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    /// Removes `path` if no process is writing it (its writer finished or died), holding the
    /// file's lock while unlinking so that a writer that opened it meanwhile notices.
    ///
    /// - Returns: The bytes removed, or `nil` when the file is in use or already gone.
    static func removeIfAbandoned(_ path: String, dryRun: Bool) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_nlink > 0 else { return nil }
        if !dryRun && unlink(path) != 0 { return nil }
        return Int(info.st_size)
    }

    /// Names in a directory (without `.` and `..`), or an empty list if it cannot be read.
    static func contents(of path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = name(of: entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The byte offset of `d_name` in a `dirent`.
    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    /// The byte offset of `d_reclen` in a `dirent`.
    private static let lengthOffset = MemoryLayout<dirent>.offset(of: \dirent.d_reclen)!

    /// The name of the directory entry `entry`, read in place from `readdir`'s buffer.
    ///
    /// A record is only `d_reclen` bytes long, not `MemoryLayout<dirent>.size`: its name ends
    /// at the first NUL inside the record. Never copy the struct (`entry.pointee`, or
    /// `withUnsafeBytes(of: entry.pointee.d_name)`, which copies 256 bytes): for a record at the
    /// end of `readdir`'s buffer, the copy reads past it, and faults when the buffer ends at an
    /// unmapped page.
    static func name(of entry: UnsafePointer<dirent>) -> String {
        let record = UnsafeRawPointer(entry)
        let recordLength = Int(record.loadUnaligned(fromByteOffset: lengthOffset, as: UInt16.self))
        let name = (record + nameOffset).assumingMemoryBound(to: CChar.self)
        let length = strnlen(name, max(recordLength - nameOffset, 0))
        return String(decoding: UnsafeRawBufferPointer(start: name, count: length), as: UTF8.self)
    }

    /// A random 128-bit name in lowercase hex.
    static func randomName() -> String {
        let a = UInt64.random(in: .min ... .max)
        let b = UInt64.random(in: .min ... .max)
        return hex(a) + hex(b)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension POSIXFile {
    /// Opens an existing file and takes an exclusive `flock` on it (see `createLocked`).
    static func openLocked(_ path: String) throws(POSIXErrorCode) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = error("flock \(path)")
            close(fd)
            throw failure
        }
        return fd
    }
}

extension POSIXFile {
    /// Sets the extended attribute `name` of the file at `path` to `bytes`.
    ///
    /// - Returns: `false` when the file system keeps no extended attributes or none this large
    ///   (`ENOTSUP`, `E2BIG`, `ERANGE`, `ENOSPC`): the caller keeps the bytes elsewhere.
    static func setAttribute(_ name: String, to bytes: Data, ofFile path: String) throws(POSIXErrorCode) -> Bool {
        let result = bytes.withUnsafeBytes { stash_set_attribute(path, name, $0.baseAddress, $0.count) }
        if result == 0 { return true }
        switch errno {
        case ENOTSUP, EOPNOTSUPP, E2BIG, ERANGE, ENOSPC: return false
        default: throw error("setxattr \(name) \(path)")
        }
    }

    /// The extended attribute `name` of the file at `path`, or `nil` when it has none (or the
    /// file system keeps none).
    static func attribute(_ name: String, ofFile path: String) -> Data? {
        var capacity = 1024
        while true {
            guard let buffer = malloc(capacity) else { return nil }
            let length = stash_get_attribute(path, name, buffer, capacity)
            if length >= 0 { return Data(bytesNoCopy: buffer, count: length, deallocator: .free) }
            free(buffer)
            guard errno == ERANGE, capacity < 1 << 20 else { return nil }
            capacity *= 16
        }
    }

    /// Removes the extended attribute `name` of the file at `path`, if it has one.
    static func removeAttribute(_ name: String, ofFile path: String) throws(POSIXErrorCode) {
        if stash_remove_attribute(path, name) != 0 && errno != missingAttributeError {
            throw error("removexattr \(name) \(path)")
        }
    }

    #if canImport(Darwin)
        /// The `errno` of a read or removal of an attribute the file does not have.
        private static let missingAttributeError = ENOATTR
    #else
        private static let missingAttributeError = ENODATA
    #endif
}
