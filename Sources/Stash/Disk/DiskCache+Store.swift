import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// Stores `data` under `key`, replacing any previous value atomically, then evicts the
    /// least useful entries if a limit is exceeded.
    ///
    /// Under ``EvictionPolicy/adaptive`` (the default) an unpinned value larger than the
    /// policy's admission window, which must take its room from the main queue, is kept only if
    /// it was requested more often per byte than the entries it would displace: otherwise the
    /// store returns and the value is evicted at once (an eviction with reason
    /// ``EvictionReason/notAdmitted``), as W-TinyLFU turns away a newcomer. Each store counts as
    /// a request, so a value stored again wins its room once it is requested often enough.
    ///
    /// - Parameters:
    ///   - data: The value. Values below ``Configuration/inlineThreshold`` live in the index.
    ///   - key: Any non-empty string, stored verbatim.
    ///   - timeToLive: How long the entry stays valid; `nil` uses
    ///     ``Configuration/defaultTimeToLive``.
    ///   - pinned: `true` pins the entry (never evicted or expired), `false` unpins it, `nil`
    ///     (the default) keeps the current state of an existing entry and leaves a new one unpinned.
    ///   - metadata: Content type, HTTP validators and other strings to keep with the value.
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key,
    ///   ``StashError/Code/tooLarge`` for an unpinned value larger than the size limit,
    ///   ``StashError/Code/busy``, ``StashError/Code/readOnly`` or ``StashError/Code/io`` when the
    ///   directory or index cannot be written. A failed store changes nothing.
    /// - Complexity: O(*n*) in the value's length plus O(*e* log *N*) for *e* evicted entries
    ///   of *N*.
    public func store(
        _ data: Data, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: Metadata = Metadata()
    ) throws {
        try store(data, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata, mayBeTurnedAway: true)
    }

    /// ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``, where `mayBeTurnedAway: false`
    /// keeps the entry through its own write even when ``EvictionPolicy/adaptive``'s contest
    /// would turn it away: for `ResourceLoader`, whose caller waits for the cache's file.
    package func store(
        _ data: Data, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: Metadata = Metadata(), mayBeTurnedAway: Bool
    ) throws {
        try Self.validate(key: key)
        try checkSize(data.count, forKey: key, pinned: pinned)
        let checksum = Checksum.of(data)
        try withDiskFullRecovery(size: data.count, forKey: key) {
            let source: ValueSource
            if writesBehind && configuration.writesValueFilesInBackground && pinned != true {
                // The writer writes the file, when it commits (a benchmarked alternative).
                source = .inline(data)
            } else if data.count < configuration.inlineThreshold.bytes {
                source = .inline(data)
            } else {
                source = .file(try temporaryFile(holding: data, forKey: key))
            }
            try write(
                source, size: data.count, checksum: checksum, forKey: key,
                timeToLive: timeToLive, pinned: pinned, metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
        }
    }

    /// Stages `data` under `key` for the background writer when that needs no wait for the disk,
    /// and returns `true`; returns `false`, having done nothing, otherwise.
    ///
    /// It stages only what ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` would keep in
    /// memory until its commit: in ``WriteMode/writeBehind``, a value below
    /// ``Configuration/inlineThreshold``, in a cache that is not ``Durability/durable``, while the
    /// staging area has room for it now and no failed background commit waits to be reported.
    /// So it writes no file and never waits for the writer, and a caller that must not block (an
    /// event loop) can store without a trip to another thread. After `false`, store the value
    /// with ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` on a thread that may wait: that
    /// store throws the failure, or recovers from it when the disk was full.
    ///
    /// - Throws: ``StashError`` with ``StashError/Code/invalidKey`` for an empty key,
    ///   ``StashError/Code/tooLarge`` for a value larger than the size limit, and
    ///   ``StashError/Code/readOnly`` for a read-only cache. A failed call changes nothing.
    package func storeWithoutWaiting(_ data: Data, forKey key: String, metadata: Metadata = Metadata()) throws
        -> Bool
    {
        guard writesBehind, configuration.durability != .durable, data.count < configuration.inlineThreshold.bytes
        else { return false }
        try Self.validate(key: key)
        try checkSize(data.count, forKey: key, pinned: nil)
        return try stageStore(
            .inline(data), size: data.count, checksum: Checksum.of(data), forKey: key, timeToLive: nil, pinned: nil,
            metadata: metadata, mayBeTurnedAway: true, waits: false)
    }

    /// Stores the file at `fileURL` under `key` without loading it into memory.
    ///
    /// - Parameters:
    ///   - fileURL: The file to store.
    ///   - key: Any non-empty string, stored verbatim.
    ///   - moving: `true` moves the file into the cache when it is on the same file system
    ///     (the source is gone afterwards); `false` (the default) copies it.
    ///   - timeToLive: As in ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    ///   - pinned: As in ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    ///   - metadata: As in ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    /// - Throws: ``StashError`` with ``StashError/Code/notFound`` when the file does not exist,
    ///   and as ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` otherwise.
    /// - Complexity: O(*n*) in the file's length (its checksum is computed while copying).
    public func store(
        fileAt fileURL: URL, forKey key: String, moving: Bool = false, timeToLive: Duration? = nil,
        pinned: Bool? = nil, metadata: Metadata = Metadata()
    ) throws {
        try store(
            fileAt: fileURL, forKey: key, moving: moving, timeToLive: timeToLive, pinned: pinned, metadata: metadata,
            mayBeTurnedAway: true)
    }

    /// ``store(fileAt:forKey:moving:timeToLive:pinned:metadata:)``, where `mayBeTurnedAway: false`
    /// keeps the entry through its own write even when ``EvictionPolicy/adaptive``'s contest
    /// would turn it away: for `ResourceLoader`, whose caller waits for the cache's file.
    package func store(
        fileAt fileURL: URL, forKey key: String, moving: Bool = false, timeToLive: Duration? = nil,
        pinned: Bool? = nil, metadata: Metadata = Metadata(), mayBeTurnedAway: Bool
    ) throws {
        try Self.validate(key: key)
        let sourcePath = fileURL.path
        guard let size = POSIXFile.size(sourcePath)?.logical else {
            throw StashError(.notFound, "Cannot store \(sourcePath) under '\(key)': the file does not exist.")
        }
        try checkSize(size, forKey: key, pinned: pinned)
        if size < configuration.inlineThreshold.bytes {
            let data: Data
            switch try? POSIXFile.read(sourcePath, expectedSize: size) {
            case .bytes(let bytes): data = bytes
            default:
                throw StashError(.io, "Cannot read \(sourcePath) to store it under '\(key)': check its permissions.")
            }
            try write(
                .inline(data), size: size, checksum: Checksum.of(data), forKey: key, timeToLive: timeToLive,
                pinned: pinned, metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
            // The value is safely stored; a leftover source file is harmless.
            if moving { try? POSIXFile.remove(sourcePath) }
            return
        }
        // A moved source may be gone after a failed attempt: only a copy is retried.
        try withDiskFullRecovery(size: moving ? 0 : size, forKey: key) {
            guard !moving || access(sourcePath, F_OK) == 0 || size == 0 else {
                throw StashError(.diskFull, "The disk holding \(root) is full; '\(key)' was not stored.")
            }
            let temporary = try copyToTemporaryFile(from: sourcePath, size: size, moving: moving, forKey: key)
            try write(
                .file(temporary), size: size, checksum: temporary.checksum, forKey: key, timeToLive: timeToLive,
                pinned: pinned, metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
        }
    }

    /// Stores `data` under a new random key and returns the key.
    ///
    /// - Throws: As ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    /// - Complexity: As ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    @discardableResult
    public func storeWithGeneratedKey(
        _ data: Data, timeToLive: Duration? = nil, pinned: Bool? = nil, metadata: Metadata = Metadata()
    ) throws -> String {
        let key = UUID().uuidString.lowercased()
        try store(data, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata)
        return key
    }

    /// The value for `key`, or `nil`; setting `nil` removes the entry.
    ///
    /// A failed read returns `nil` and a failed write is dropped; both are counted in
    /// ``statistics`` and reported through ``Configuration/onEvent``. Use the throwing methods
    /// where failures matter.
    ///
    /// - Complexity: As ``data(forKey:)-1dnpb`` and ``store(_:forKey:timeToLive:pinned:metadata:)-6bikt``.
    public subscript(key: String) -> Data? {
        get {
            do {
                return try data(forKey: key)
            } catch {
                let stashError = error as? StashError ?? StashError(.io, "Reading '\(key)' failed.", cause: error)
                counters.withLock { $0.failedReads += 1 }
                configuration.onEvent?(.readFailed(key: key, error: stashError))
                return nil
            }
        }
        set {
            do {
                if let newValue { try store(newValue, forKey: key) } else { try removeData(forKey: key) }
            } catch {
                reportFailedWrite(key: key, error: error)
            }
        }
    }

    private func reportFailedWrite(key: String, error: any Error) {
        let stashError = error as? StashError ?? StashError(.io, "Cache access for '\(key)' failed.", cause: error)
        counters.withLock { $0.failedWrites += 1 }
        configuration.onEvent?(.writeFailed(key: key, error: stashError))
    }

    // MARK: - Publishing

    /// Stages the value for the background writer (``WriteMode/writeBehind``) or publishes it now.
    private func write(
        _ source: ValueSource, size: Int, checksum: UInt64, forKey key: String, timeToLive: Duration?,
        pinned: Bool?, metadata: Metadata, mayBeTurnedAway: Bool
    ) throws {
        if writesBehind {
            try stageStore(
                source, size: size, checksum: checksum, forKey: key, timeToLive: timeToLive, pinned: pinned,
                metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
        } else {
            try publish(
                source, size: size, checksum: checksum, forKey: key, timeToLive: timeToLive, pinned: pinned,
                metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
        }
    }

    /// Where the bytes of a value being stored are.
    enum ValueSource {
        case inline(Data)
        case file(TemporaryFile)
    }

    /// A fully written temporary file, still locked by its descriptor.
    struct TemporaryFile {
        var path: String
        var descriptor: Int32
        var checksum: UInt64
    }

    private func checkSize(_ size: Int, forKey key: String, pinned: Bool?) throws {
        if pinned != true && size > configuration.sizeLimit.bytes {
            throw StashError(
                .tooLarge,
                "The value for '\(key)' is \(ByteCount(size)), larger than the cache's size limit of \(configuration.sizeLimit): raise sizeLimit or pin the entry."
            )
        }
    }

    private func temporaryPath() -> String { root + "/tmp/" + POSIXFile.randomName() + ".tmp" }

    /// Opens a new locked temporary file, recreating the directories if they were deleted.
    private func createTemporaryFile(forKey key: String) throws -> (path: String, descriptor: Int32) {
        var recreated = false
        for _ in 0..<8 {
            let path = temporaryPath()
            do {
                if let fd = try POSIXFile.createLocked(path) { return (path, fd) }
            } catch  where error.errno == ENOENT && !recreated {
                recreated = true
                try? POSIXFile.makeDirectory(root + "/tmp", mode: 0o777)  // the next attempt reports any real failure
            } catch {
                throw ioError(error, "Cannot create a temporary file in \(root)/tmp for '\(key)'")
            }
        }
        throw StashError(.io, "Cannot create a temporary file in \(root)/tmp for '\(key)': it keeps disappearing.")
    }

    func ioError(_ error: any Error, _ what: String) -> StashError {
        if let error = error as? StashError { return error }
        return switch (error as? POSIXErrorCode)?.errno {
        case EACCES, EPERM, EROFS:
            StashError(
                .readOnly, "\(what): the directory is not writable; fix its permissions or choose another.",
                cause: error)
        case ENOSPC, EDQUOT:
            StashError(.diskFull, "\(what): the disk is full; free space or lower the size limit.", cause: error)
        default:
            StashError(.io, "\(what).", cause: error)
        }
    }

    /// A read's failure: a permission error says so (not that the directory is unwritable).
    func readError(_ error: any Error, _ what: String) -> StashError {
        if let error = error as? StashError { return error }
        return switch (error as? POSIXErrorCode)?.errno {
        case EACCES, EPERM:
            StashError(
                .io,
                "\(what): permission denied (the file's owner or mode does not let this user read it); ask its owner to make it readable.",
                cause: error)
        default:
            ioError(error, what)
        }
    }

    func temporaryFile(holding data: Data, forKey key: String) throws -> TemporaryFile {
        let (path, fd) = try createTemporaryFile(forKey: key)
        do {
            try checkInjectedWriteFault(path)
            try data.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: path) }
            if configuration.durability == .durable { try POSIXFile.sync(fd, path: path) }
        } catch {
            discardTemporary(path: path, descriptor: fd)
            throw ioError(error, "Cannot write the value for '\(key)' to \(path)")
        }
        return TemporaryFile(path: path, descriptor: fd, checksum: 0)
    }

    private func copyToTemporaryFile(from source: String, size: Int, moving: Bool, forKey key: String) throws
        -> TemporaryFile
    {
        let (path, fd) = try createTemporaryFile(forKey: key)
        var hasher = Checksum()
        var copied = 0
        do {
            let input = open(source, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw POSIXFile.error("open \(source)") }
            defer { Foundation.close(input) }
            if moving {
                // Reading once is unavoidable (the checksum); then a same-device rename avoids a copy.
                try Self.hashFile(input, path: source, into: &hasher, copyingTo: nil, copied: &copied)
                // Lock the source before it enters tmp/, so that the orphan collector never sees
                // it unlocked there.
                let locked = try POSIXFile.openLocked(source)
                if copied == size && Foundation.rename(source, path) == 0 {
                    Foundation.close(fd)
                    return TemporaryFile(path: path, descriptor: locked, checksum: hasher.finalize())
                }
                let renameError = errno
                Foundation.close(locked)
                guard copied == size else {
                    throw POSIXErrorCode(operation: "read \(source) (size changed while copying)", errno: EIO)
                }
                guard renameError == EXDEV else {
                    throw POSIXErrorCode(operation: "rename \(source) -> \(path)", errno: renameError)
                }
                lseek(input, 0, SEEK_SET)
                hasher = Checksum()
                copied = 0
            }
            try checkInjectedWriteFault(path)
            try Self.hashFile(input, path: source, into: &hasher, copyingTo: (fd, path), copied: &copied)
            guard copied == size else {
                throw POSIXErrorCode(operation: "read \(source) (size changed while copying)", errno: EIO)
            }
            if configuration.durability == .durable { try POSIXFile.sync(fd, path: path) }
            if moving { try? POSIXFile.remove(source) }  // copied safely; a leftover source is harmless
        } catch {
            discardTemporary(path: path, descriptor: fd)
            throw ioError(error, "Cannot copy \(source) into the cache for '\(key)'")
        }
        return TemporaryFile(path: path, descriptor: fd, checksum: hasher.finalize())
    }

    private static func hashFile(
        _ input: Int32, path: String, into hasher: inout Checksum, copyingTo output: (Int32, String)?,
        copied: inout Int
    ) throws(POSIXErrorCode) {
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer.baseAddress!, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIXFile.error("read \(path)")
            }
            if n == 0 { return }
            let filled = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            hasher.update(filled)
            if let (fd, outputPath) = output { try POSIXFile.writeAll(fd, filled, path: outputPath) }
            copied += n
        }
    }

    func discardTemporary(path: String, descriptor: Int32) {
        try? POSIXFile.remove(path)  // a leftover temporary file is reclaimed as an orphan later
        Foundation.close(descriptor)
    }
}
