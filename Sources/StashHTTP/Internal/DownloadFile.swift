import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file in the loader's `downloads/` directory that one response body streams into.
///
/// The directory sits inside the cache directory, on the same file system, so handing the
/// finished file to `DiskCache.store(fileAt:moving: true)` is a rename. It is not the disk
/// cache's `tmp/`, whose orphan collector deletes files it can lock.
///
/// While it is written the file holds an exclusive `flock`, so that ``removeAbandoned(in:now:)``
/// (run when a loader starts, possibly in another process) never deletes a live download.
/// Not thread-safe: one transfer owns it.
final class DownloadFile {
    private(set) var path: String
    private var descriptor: Int32

    /// Files younger than this are left alone by ``removeAbandoned(in:now:)`` even when unlocked:
    /// a finished download is briefly unlocked between its last write and the disk cache's
    /// rename.
    static let abandonmentAge: TimeInterval = 60

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { remove() }
    }

    /// Creates a new, locked, empty file in `directory`, creating the directory if needed.
    ///
    /// - Throws: `POSIXError` when the directory or file cannot be created.
    static func create(in directory: String) throws -> DownloadFile {
        var createdDirectory = false
        for _ in 0..<8 {
            let path = directory + "/" + randomName() + ".download"
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd < 0 {
                let code = errno
                if code == EEXIST { continue }  // a name collision: draw another
                guard code == ENOENT, !createdDirectory else { throw posixError(code) }
                createdDirectory = true
                guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw posixError(errno) }
                continue
            }
            while flock(fd, LOCK_EX) != 0 {
                if errno == EINTR { continue }
                let code = errno
                Foundation.close(fd)
                throw posixError(code)
            }
            // A cleaner may have locked and unlinked the file between our open and our lock:
            // then the path no longer names our file, and we start over with another name.
            var opened = stat()
            var named = stat()
            if fstat(fd, &opened) == 0, stat(path, &named) == 0, opened.st_ino == named.st_ino,
                opened.st_dev == named.st_dev
            {
                return DownloadFile(path: path, descriptor: fd)
            }
            Foundation.close(fd)
        }
        throw posixError(EEXIST)
    }

    /// Opens (creating if needed) the partial download at `path`, locked, positioned at its end
    /// or emptied.
    ///
    /// - Returns: `nil` when another transfer (in any process) holds it locked, or it does not
    ///   exist and `truncating` is `false`.
    /// - Throws: `POSIXError` when it cannot be created.
    static func openPartial(at path: String, truncating: Bool) throws -> DownloadFile? {
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (truncating ? O_CREAT : 0)
        var fd = open(path, flags, 0o600)
        if fd < 0 && errno == ENOENT && truncating {
            let directory = (path as NSString).deletingLastPathComponent
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else { throw posixError(errno) }
            fd = open(path, flags, 0o600)
        }
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw posixError(errno)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            Foundation.close(fd)
            return nil
        }
        if truncating {
            guard ftruncate(fd, 0) == 0 else {
                let code = errno
                Foundation.close(fd)
                throw posixError(code)
            }
        } else {
            lseek(fd, 0, SEEK_END)
        }
        return DownloadFile(path: path, descriptor: fd)
    }

    /// The file's length.
    var size: Int {
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// Gives the file a fresh random name in its directory, still locked, so that its former
    /// name (a partial's, which another transfer could open) no longer reaches it.
    ///
    /// - Throws: `POSIXError` when the rename fails.
    func moveToRandomName() throws {
        let directory = (path as NSString).deletingLastPathComponent
        let target = directory + "/" + Self.randomName() + ".download"
        guard rename(path, target) == 0 else { throw Self.posixError(errno) }
        path = target
    }

    /// Appends `data`.
    ///
    /// - Throws: `POSIXError` (such as `ENOSPC`) when the write fails.
    func write(_ data: Data) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard var pointer = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = Foundation.write(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Self.posixError(errno)
                }
                pointer += written
                remaining -= written
            }
        }
    }

    /// Closes the file, releasing its lock, and leaves it for the disk cache to take.
    func close() {
        guard descriptor >= 0 else { return }
        Foundation.close(descriptor)
        descriptor = -1
    }

    /// Deletes the file (while still holding its lock, if open) and closes it.
    func remove() {
        unlink(path)  // ENOENT is fine: the disk cache may have taken it already
        close()
    }

    /// Removes files in `directory` left by crashed or killed runs: those this process can
    /// lock (so no live transfer owns them) and that were not written to in the last
    /// ``abandonmentAge`` seconds (``PartialDownload/lifetime`` for partial downloads, which
    /// are kept to be resumed).
    ///
    /// - Returns: The number of files removed.
    @discardableResult
    static func removeAbandoned(in directory: String, now: Date = Date()) -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in entries {
            let path = directory + "/" + name
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { Foundation.close(fd) }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_nlink > 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
                let modified = TimeInterval(info.st_mtimespec.tv_sec)
            #else
                let modified = TimeInterval(info.st_mtim.tv_sec)
            #endif
            let age = PartialDownload.isPartial(name) ? PartialDownload.lifetime : abandonmentAge
            guard now.timeIntervalSince1970 - modified >= age else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    private static func randomName() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16) + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    private static func posixError(_ code: Int32) -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
}
