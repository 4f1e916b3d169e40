import Foundation

/// A persistent, size-bounded cache of byte values in one directory.
///
/// An SQLite index (in WAL mode) records every entry; values smaller than
/// ``Configuration/inlineThreshold`` live in the index, larger ones in files with random names
/// under `data/`. Keys are arbitrary strings stored verbatim — compared byte for byte as
/// UTF-8, so differently normalised spellings are different keys — and never become paths.
///
/// Writes are atomic: a reader sees the old value or the new one, never a mix, and a crash
/// at any moment leaves no entry pointing at partial bytes.
///
/// By default (``WriteMode/writeBehind``) `store`, `removeData` and `trim` return once the
/// change is staged in memory, and a background writer commits staged changes in one
/// transaction per batch within ``Configuration/maxWriteDelay``. Every read through this
/// object sees staged changes at once; other processes, and other `DiskCache` objects on the
/// same directory, see them after the commit (call `flush()` for a barrier). The byte and
/// count limits are hard once a batch commits: its stores evict in its transaction, and the
/// totals count staged changes (reading them commits first). A crash loses at most the
/// unflushed, unpinned changes of the last ``Configuration/maxWriteDelay``; pinned stores,
/// ``pin(_:)``, ``unpin(_:)``, ``close()`` and every store under ``Durability/durable``
/// commit before they return. ``WriteMode/immediate`` commits every change before returning.
///
/// One `DiskCache` may be used from many threads; several processes may open the same
/// directory at once.
///
/// ```swift
/// let cache = try DiskCache(directory: .caches("photos"), sizeLimit: .megabytes(10))
/// try cache.store(data, forKey: "photo-42")
/// let hit = try cache.data(forKey: "photo-42")
/// ```
///
/// - Important: The synchronous methods perform blocking file and database I/O. From Swift
///   concurrency, call the `async` variants, which run that I/O off the caller's executor.
public final class DiskCache: Sendable {
    /// The directory holding the index and the value files.
    public let directory: URL
    /// The settings the cache was opened with.
    public let configuration: Configuration

    let index: DiskIndex
    let root: String
    let accessLog: LockedValue<AccessLog>
    let counters = LockedValue(Statistics())
    let evictionStreams = LockedValue([UInt64: AsyncStream<EvictionEvent>.Continuation]())
    let sketchSlot = LockedValue(SketchSlot())
    let persistedStates = LockedValue(PersistedStates())
    /// How many entry rows the hit writes looked up in the index (tests).
    let hitWriteLookups = LockedValue(0)
    let backgroundWork = DispatchGroup()
    let faults = LockedValue(FaultInjection())
    /// Where recorded accesses are written to the index, off the callers' threads.
    let accessFlushQueue = DispatchQueue(label: "Stash.DiskCache.accessFlush", qos: .utility)
    let accessFlushHooks = LockedValue(AccessFlushHooks())
    let writeBehindHooks = LockedValue(WriteBehindHooks())
    /// Stores and removals waiting for the background writer (``WriteMode/writeBehind``).
    let staging = LockedValue(StagingArea())
    /// Where the background writer commits staged changes, one batch at a time, in order.
    let writerQueue = DispatchQueue(label: "Stash.DiskCache.writer", qos: .utility)
    /// Set on ``writerQueue`` only, so that a commit asked for on it runs there directly.
    let writerQueueKey = DispatchSpecificKey<Bool>()

    /// Opens the cache in `directory`, creating it (owner-only permissions) if needed.
    ///
    /// Opening reads one row of the index, whatever the number of entries. Files left behind
    /// by a crash are reclaimed afterwards on a background queue.
    ///
    /// A missing or damaged index (bad header, truncated, a foreign or lost write-ahead log, an
    /// interrupted rebuild) is moved aside as `index.sqlite.corrupt-<timestamp>` and rebuilt
    /// from the value files, reported through ``Event/indexRebuilt(recovered:lost:)`` and
    /// ``lastIndexRebuild``. A directory that exists but cannot be written opens read-only
    /// (``isReadOnly``).
    ///
    /// - Parameters:
    ///   - directory: The cache's directory. Use `URL.caches(_:)` for the platform's
    ///     caches folder.
    ///   - configuration: Limits and behaviour; see ``Configuration``.
    /// - Throws: ``StashError`` with ``StashError/Code/invalidArgument`` for a bad configuration,
    ///   ``StashError/Code/readOnly`` when the directory cannot be created, or is read-only and
    ///   holds no index, ``StashError/Code/unsupportedVersion`` for an index written by a newer
    ///   Stash, ``StashError/Code/io`` otherwise.
    /// - Complexity: O(1) in the number of entries for a healthy index; O(*F*) for *F* value
    ///   files when the index is rebuilt.
    public init(directory: URL, configuration: Configuration = Configuration()) throws {
        guard directory.isFileURL else {
            throw StashError(.invalidArgument, "DiskCache needs a file URL, got \(directory).")
        }
        try configuration.validate(directory: directory)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw StashError(
                .invalidArgument,
                "The cache directory \(directory.path) is a file, not a directory: choose a directory path.")
        }
        self.directory = directory.standardizedFileURL
        self.configuration = configuration
        self.root = self.directory.path
        self.accessLog = LockedValue(AccessLog())
        writerQueue.setSpecific(key: writerQueueKey, value: true)
        let onEvent = configuration.onEvent
        self.index = try DiskIndex(
            root: root, busyTimeout: configuration.busyTimeout, durability: configuration.durability,
            commitsEachWrite: configuration.writeMode == .immediate || configuration.durability == .durable,
            onEvent: onEvent,
            readOnly: configuration.opensReadOnly)
        // A read-only cache writes nothing: its stored policy state stays as it is.
        if !index.isReadOnly {
            do {
                try adoptEvictionPolicy()
            } catch let error as StashError where error.code == .corrupt {
                // Damage that the checks on open cannot see (they read headers only) shows here.
                try index.rebuildDamagedDatabase(
                    reason: "reading the index failed: \(error.cause.map { "\($0)" } ?? "")")
                try adoptEvictionPolicy()
            }
        }
        if writesBehind && !index.isReadOnly {
            // What the index holds now, so that the first stores into a full cache are
            // committed (and evict) at once; a failed read only delays that to the first commit.
            let totals = try? index.read { db in
                try db.first("SELECT size - pinned_size, count - pinned_count FROM totals WHERE id = 1") {
                    (size: $0.int(0), count: $0.int(1))
                }
            }
            if let totals = totals ?? nil { staging.withLock { $0.committed = totals } }
        }
        // Other objects of this process on this directory commit what they staged, so that
        // this one starts from it (a relaunch within the process, a second object).
        let others = Self.openCaches.withLock { registry -> [DiskCache] in
            var objects = registry[root, default: []].filter { $0.cache != nil }
            let others = objects.compactMap(\.cache)
            objects.append(WeakCacheReference(cache: self))
            registry[root] = objects
            return others
        }
        for other in others { other.commitStagedNow() }
        if configuration.reclaimsOrphansOnOpen && !index.isReadOnly {
            DispatchQueue.global(qos: .utility).async(group: backgroundWork) { [self] in
                // A failure here is harmless: the next open, or verify(repair:), tries again.
                _ = try? reclaimOrphans()
            }
        }
    }

    /// Opens the cache in `directory` with a byte limit and otherwise default settings.
    ///
    /// - Throws: See ``init(directory:configuration:)``.
    /// - Complexity: O(1) in the number of entries.
    public convenience init(directory: URL, sizeLimit: ByteCount) throws {
        try self.init(directory: directory, configuration: Configuration(sizeLimit: sizeLimit))
    }

    deinit {
        // No wait for background work here: it holds a strong reference while it runs, so by
        // now it has finished, and this deinit may even be running on its thread. No writer
        // job can run either (they hold the cache weakly): staged changes commit here.
        runStagedCommit()
        flushAndCloseIndex()
    }

    /// Commits staged changes, writes recorded accesses to the index and closes its connections.
    ///
    /// Hits are otherwise written in the background, within ``Configuration/accessFlushDelay``.
    /// A failed commit is reported through ``Configuration/onEvent`` and thrown by the next
    /// write or `flush()`.
    ///
    /// Called automatically when the cache is deallocated. Using the cache after `close`
    /// reopens the index.
    ///
    /// - Complexity: O(*s* + *p*), where *s* is the number of staged changes and *p* the
    ///   number of accesses not yet written.
    public func close() {
        backgroundWork.wait()
        commitStagedNow()
        flushAndCloseIndex()
    }

    private func flushAndCloseIndex() {
        // Losing recency updates or sketch counts only makes eviction order slightly less precise.
        _ = try? flushAccesses()
        if sketchSlot.withLock({ $0.hasUnsavedChanges }) {
            try? index.write { db in try saveSketch(in: db, force: true) }
        }
        index.close()
    }

    /// Whether the cache was opened read-only because its directory cannot be written.
    ///
    /// Reads, listing and ``verify(repair:)-9glgg`` without repair work; every write throws
    /// ``StashError/Code/readOnly``; nothing is written behind the caller's back (expired or
    /// damaged entries are misses but stay in the index, access times are not recorded).
    public var isReadOnly: Bool { index.isReadOnly }

    /// Waits until background work started by this object has finished: orphan reclamation,
    /// the commit of every staged store and removal (as `flush()`, whose failure the next
    /// write or `flush()` throws), and the writes of recorded hits that are already due (a full
    /// batch).
    ///
    /// Hits waiting for ``Configuration/accessFlushDelay`` are not written by this call; use
    /// ``close()`` for that.
    public func waitForBackgroundWork() {
        backgroundWork.wait()
        commitStagedNow()
        accessFlushQueue.sync {}
    }

    /// Records the configured policy in the index; when it differs from the one the entries'
    /// state was kept for, that state is reset (ranks, which all policies read as age, stay).
    ///
    /// O(1) when the policy is unchanged, O(*N*) once after a change.
    private func adoptEvictionPolicy() throws {
        let name = configuration.evictionPolicy.description
        let stored = try wrapIndexErrors {
            try index.read { db in try db.first("SELECT policy FROM totals WHERE id = 1") { $0.text(0) } }
        }
        guard stored != .some(name) else { return }
        try wrapIndexErrors {
            try index.write { db in
                try db.execute(
                    """
                    UPDATE states SET queue = 0, frequency = 0 WHERE queue != 0 OR frequency != 0;
                    DELETE FROM ghosts;
                    DELETE FROM sketch;
                    UPDATE totals SET hand = 0, policy = '\(name)' WHERE id = 1;
                    """)
            }
        }
        discardSketch()
    }

    /// A `DiskCache` of this process, held weakly.
    struct WeakCacheReference {
        weak var cache: DiskCache?
    }

    /// The `DiskCache` objects of this process by directory, so that opening one commits what
    /// the others staged there.
    static let openCaches = LockedValue([String: [WeakCacheReference]]())

    // MARK: - Paths and keys

    func path(forFile name: String) -> String { root + "/data/" + name }

    static func validate(key: String) throws {
        if key.isEmpty {
            throw StashError(.invalidKey, "A cache key must not be empty: use a non-empty string such as the URL.")
        }
    }

    static func keyBytes(_ key: String) -> SQLiteValue { .blob(utf8(key)) }

    /// The key's UTF-8 bytes, copied straight from the string's storage.
    ///
    /// `Data(key.utf8)` goes through the generic sequence initializer, whose dynamic casts cost
    /// about as much as the rest of recording a hit.
    static func utf8(_ key: String) -> Data {
        key.utf8.withContiguousStorageIfAvailable { Data(buffer: $0) } ?? Data(key.utf8)
    }
}

extension URL {
    /// The directory `name` inside the platform's caches directory: `$XDG_CACHE_HOME/name`
    /// (or `~/.cache/name`) on Linux, `Library/Caches/name` on Apple platforms.
    public static func caches(_ name: String) -> URL {
        #if canImport(Darwin)
            let base =
                FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
                ?? URL(fileURLWithPath: NSTemporaryDirectory())
        #else
            let environment = ProcessInfo.processInfo.environment
            let base: URL
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
                base = URL(fileURLWithPath: xdg, isDirectory: true)
            } else {
                base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                    ".cache", isDirectory: true)
            }
        #endif
        return base.appendingPathComponent(name, isDirectory: true)
    }
}
