import Foundation

extension DiskCache {
    /// How hard the cache works to keep recent writes across a power loss.
    public enum Durability: Sendable, Hashable {
        /// No `fsync` per write (the default). A process crash loses nothing that was committed
        /// (under ``WriteMode/writeBehind``, only unflushed changes of the last
        /// ``Configuration/maxWriteDelay``); a power loss may lose recent entries, but never
        /// serves a torn one (lengths are always checked; enable
        /// ``Configuration/verifiesChecksums`` to also catch zero-filled blocks).
        case fast
        /// `fsync` of the value file and its directory before the index commits, and SQLite's
        /// `synchronous = FULL`; on Apple platforms `F_FULLFSYNC` for both, which also empties the
        /// drive's cache. Every `store` that returned survives a power loss: under
        /// ``WriteMode/writeBehind`` too, each store commits before it returns.
        case durable
    }

    /// Settings of a ``DiskCache``.
    ///
    /// Every setting has a sensible default.
    public struct Configuration: Sendable {
        /// The most bytes of values that unpinned entries may hold.
        ///
        /// Defaults to 150 MB.
        ///
        ///
        /// Only value bytes count: the index's own overhead (roughly 150 bytes an entry plus
        /// the key) and file-system block rounding are not included. ``DiskCache/diskUsage()``
        /// reports the real footprint.
        public var sizeLimit: ByteCount
        /// The most unpinned entries the cache may hold, or `nil` for no count limit (the default).
        public var countLimit: Int?
        /// The fraction of a limit that eviction goes down to.
        ///
        /// When a write pushes a total over its limit, entries are evicted until the total is at
        /// or below this fraction of the limit, so that a full cache evicts in batches rather
        /// than on every write. Defaults to 0.99: a full cache stays on average above 99 % of
        /// its limit, and one write in about every 1 % of the limit's worth of writes evicts
        /// that batch in its transaction. 1.0 evicts only what each write needs.
        public var lowWaterMark: Double
        /// The most one eviction batch removes beyond what the write that triggered it needs,
        /// or `nil` for no bound.
        ///
        /// Bounds the batch that ``lowWaterMark`` asks for in a large cache: 1 % of 100 GB is
        /// 1 GB, and 1 % of a million small entries is 10 000 deletions in one transaction, a
        /// stall of seconds for the store that pays for it. With the bound, eviction stops at
        /// whichever of the low-water mark and `limit − maximumEvictionBatch` is higher (and,
        /// for ``countLimit``, 1024 entries below it), so the cache stays fuller still.
        /// Defaults to 1 MiB.
        public var maximumEvictionBatch: ByteCount?
        /// The time-to-live of entries stored without one, or `nil` (the default) to keep entries
        /// until they are evicted.
        public var defaultTimeToLive: Duration?
        /// Values smaller than this are stored in the index itself rather than in files.
        ///
        /// Defaults to 32 KiB.
        public var inlineThreshold: ByteCount
        /// Whether `store` syncs to stable storage before returning.
        ///
        /// Defaults to ``Durability/fast``.
        public var durability: Durability
        /// Whether every read recomputes the value's checksum.
        ///
        /// This costs about 0.1 ms per MiB read. Defaults to `false`: reads then check only the
        /// length.
        public var verifiesChecksums: Bool
        /// How long a write waits for another process holding the index.
        ///
        /// After that it fails with ``StashError/Code/busy``. Defaults to 5 seconds.
        public var busyTimeout: Duration
        /// Which entries are evicted first.
        ///
        /// Defaults to ``EvictionPolicy/adaptive``, which adapts its admission window to the
        /// workload and stays within 0.02 of the best policy measured on every trace of
        /// `Benchmarks/POLICIES.md`, recency-heavy ones included; use
        /// ``EvictionPolicy/tinyLFU(objective:)`` with ``EvictionPolicy/Objective/byteMissRatio``
        /// to minimise missed bytes instead, or ``EvictionPolicy/leastRecentlyUsed`` for LRU.
        public var evictionPolicy: EvictionPolicy
        /// Whether files left behind by a crash are reclaimed by a background task after opening.
        ///
        /// Defaults to `true`.
        public var reclaimsOrphansOnOpen: Bool
        /// How many distinct keys' recorded accesses make a batch that is written to the index
        /// at once.
        ///
        /// Hits are recorded in memory and written on a background queue, never on the reading
        /// thread: when this many keys' hits are waiting, after ``accessFlushDelay``, before the
        /// next write or eviction, and on `close`. Defaults to 4096.
        public var accessFlushBatch: Int
        /// The longest a hit waits in memory before a background write records it in the index,
        /// where other processes' evictions see it.
        ///
        /// Defaults to 1 second.
        public var accessFlushDelay: Duration
        /// When a store, removal or trim reaches the index: committed in the background with
        /// others (``WriteMode/writeBehind``, the default) or before the call returns
        /// (``WriteMode/immediate``).
        public var writeMode: WriteMode
        /// Under ``WriteMode/writeBehind``, the longest a change waits in memory before the
        /// background writer commits it, where other processes see it.
        ///
        /// A process killed in between loses at most the changes of this window that no
        /// `flush()` covered. Defaults to 25 ms.
        public var maxWriteDelay: Duration
        /// Under ``WriteMode/writeBehind``, the most bytes of values waiting in memory to be
        /// committed, or `nil` for the default: the smaller of 8 MiB and 5 % of ``sizeLimit``.
        ///
        /// A store that would exceed it waits for the writer (back-pressure), so memory stays
        /// bounded whatever the caller does. A single value larger than the bound is staged
        /// alone. Values at or above ``inlineThreshold`` wait in their temporary files, not in
        /// memory: they count against a second bound, 5 % of ``sizeLimit`` (or this one if it is
        /// larger), on all the bytes staged, which is how far the disk may go past ``sizeLimit``
        /// before the writer evicts, and at most 256 of them wait at once (each keeps its file
        /// open). So stores of large values do not wait for a writer that commits less often
        /// than every 8 MiB of them.
        public var stagingLimit: ByteCount?
        /// The current time; inject a clock in tests to drive expiry.
        public var clock: @Sendable () -> Date
        /// Called, outside any lock, for each entry evicted or expired.
        public var onEviction: (@Sendable (EvictionEvent) -> Void)?
        /// Called, outside any lock, when the cache notices and handles damage (a damaged
        /// index moved aside, a truncated file dropped, orphans reclaimed).
        public var onEvent: (@Sendable (Event) -> Void)?
        /// Opens the cache read-only even when its directory is writable (fault injection in
        /// tests, where running as root makes every directory writable).
        var opensReadOnly = false
        /// Whether the background writer writes value files (kept in memory until it commits)
        /// instead of the caller's thread, under ``WriteMode/writeBehind``.
        ///
        /// Off by default, as measured (Benchmarks/README.md, issue 30); kept for the
        /// benchmark that compares the two.
        package var writesValueFilesInBackground = false

        /// Creates a configuration.
        public init(
            sizeLimit: ByteCount = .megabytes(150),
            countLimit: Int? = nil,
            lowWaterMark: Double = 0.99,
            maximumEvictionBatch: ByteCount? = .mebibytes(1),
            defaultTimeToLive: Duration? = nil,
            inlineThreshold: ByteCount = .kibibytes(32),
            durability: Durability = .fast,
            verifiesChecksums: Bool = false,
            busyTimeout: Duration = .seconds(5),
            evictionPolicy: EvictionPolicy = .adaptive,
            reclaimsOrphansOnOpen: Bool = true,
            accessFlushBatch: Int = 4096,
            accessFlushDelay: Duration = .seconds(1),
            writeMode: WriteMode = .writeBehind,
            maxWriteDelay: Duration = .milliseconds(25),
            stagingLimit: ByteCount? = nil,
            clock: @escaping @Sendable () -> Date = { Date() },
            onEviction: (@Sendable (EvictionEvent) -> Void)? = nil,
            onEvent: (@Sendable (Event) -> Void)? = nil
        ) {
            self.sizeLimit = sizeLimit
            self.countLimit = countLimit
            self.lowWaterMark = lowWaterMark
            self.maximumEvictionBatch = maximumEvictionBatch
            self.defaultTimeToLive = defaultTimeToLive
            self.inlineThreshold = inlineThreshold
            self.durability = durability
            self.verifiesChecksums = verifiesChecksums
            self.busyTimeout = busyTimeout
            self.evictionPolicy = evictionPolicy
            self.reclaimsOrphansOnOpen = reclaimsOrphansOnOpen
            self.accessFlushBatch = accessFlushBatch
            self.accessFlushDelay = accessFlushDelay
            self.writeMode = writeMode
            self.maxWriteDelay = maxWriteDelay
            self.stagingLimit = stagingLimit
            self.clock = clock
            self.onEviction = onEviction
            self.onEvent = onEvent
        }

        func validate(directory: URL) throws {
            func invalid(_ what: String) -> StashError {
                StashError(.invalidArgument, "Invalid DiskCache configuration for \(directory.path): \(what).")
            }
            guard sizeLimit.bytes > 0 else { throw invalid("sizeLimit must be positive, got \(sizeLimit.bytes)") }
            if let countLimit, countLimit <= 0 { throw invalid("countLimit must be positive, got \(countLimit)") }
            guard lowWaterMark > 0, lowWaterMark <= 1 else {
                throw invalid("lowWaterMark must be in (0, 1], got \(lowWaterMark)")
            }
            if let batch = maximumEvictionBatch, batch.bytes <= 0 {
                throw invalid("maximumEvictionBatch must be positive or nil, got \(batch.bytes)")
            }
            if let ttl = defaultTimeToLive, ttl <= .zero {
                throw invalid("defaultTimeToLive must be positive, got \(ttl)")
            }
            guard inlineThreshold.bytes >= 0 else { throw invalid("inlineThreshold must not be negative") }
            guard accessFlushBatch > 0 else { throw invalid("accessFlushBatch must be positive") }
            guard accessFlushDelay >= .zero else { throw invalid("accessFlushDelay must not be negative") }
            guard maxWriteDelay >= .zero else { throw invalid("maxWriteDelay must not be negative") }
            if let stagingLimit, stagingLimit.bytes <= 0 {
                throw invalid("stagingLimit must be positive or nil, got \(stagingLimit.bytes)")
            }
        }
    }

    /// Why an entry left the cache without being removed by the caller.
    public enum EvictionReason: String, Sendable, Hashable, Codable {
        /// The byte limit was exceeded.
        case sizeLimit
        /// The count limit was exceeded.
        case countLimit
        /// The entry's time-to-live ran out.
        case expired
        /// A caller asked for ``DiskCache/trim(toSize:)-4dtgm`` or ``DiskCache/trim(toCount:)``.
        case trimmed
        /// The entry was being written and lost ``EvictionPolicy/adaptive``'s admission
        /// contest: alone larger than the admission window, it was requested less often per
        /// byte than the entries it would have displaced, so it was not kept.
        case notAdmitted
    }

    /// One evicted entry.
    public struct EvictionEvent: Sendable, Hashable {
        /// The entry's key.
        public var key: String
        /// The entry's size in bytes.
        public var size: Int
        /// Why it was evicted.
        public var reason: EvictionReason
    }

    /// Something the cache noticed and handled on its own.
    public enum Event: Sendable, CustomStringConvertible {
        /// The index was damaged and replaced by an empty one.
        case recoveredDamagedIndex(message: String)
        /// The index was missing or damaged and was rebuilt from the self-describing value files
        /// (see ``DiskCache/lastIndexRebuild`` for the reason and where the old index went).
        case indexRebuilt(recovered: Int, lost: Int)
        /// A rebuild of the index has examined `filesScanned` value files so far (sent every
        /// thousand files, for progress displays).
        case rebuildingIndex(filesScanned: Int)
        /// The disk was full while storing: entries were evicted and the effective size limit
        /// lowered to what the disk holds (see ``DiskCache/effectiveSizeLimit``).
        case diskFull(effectiveSizeLimit: ByteCount)
        /// An entry's value file was missing, short or failed its checksum; the entry was dropped.
        case droppedDamagedEntry(key: String, reason: String)
        /// Files left behind by an interrupted write were removed.
        case reclaimedOrphans(count: Int, bytes: Int)
        /// A write made through a non-throwing API (the subscript setter) failed.
        case writeFailed(key: String, error: StashError)
        /// A read made through a non-throwing API (the subscript getter) failed.
        case readFailed(key: String, error: StashError)
        /// The background writer could not commit a batch of `changes` staged stores and
        /// removals: the batch was dropped whole (none of it is in the index) and the next
        /// write or `flush()` throws `error`.
        case commitFailed(changes: Int, error: StashError)

        /// A one-line description of the event.
        public var description: String {
            switch self {
            case .recoveredDamagedIndex(let message): message
            case .indexRebuilt(let recovered, let lost):
                "index rebuilt from the value files: \(recovered) entries recovered, \(lost) lost"
            case .rebuildingIndex(let scanned): "rebuilding the index: \(scanned) files scanned"
            case .diskFull(let limit): "the disk is full: effective size limit lowered to \(limit)"
            case .droppedDamagedEntry(let key, let reason): "dropped damaged entry '\(key)': \(reason)"
            case .reclaimedOrphans(let count, let bytes): "reclaimed \(count) orphan files (\(bytes) bytes)"
            case .writeFailed(let key, let error): "write of '\(key)' failed: \(error)"
            case .readFailed(let key, let error): "read of '\(key)' failed: \(error)"
            case .commitFailed(let changes, let error):
                "background commit of \(changes) staged changes failed and was dropped: \(error)"
            }
        }
    }

    /// Extra facts stored with an entry: what the resource loader needs to revalidate it,
    /// plus any strings of the caller's.
    public struct Metadata: Sendable, Hashable, Codable {
        /// The MIME type, such as `image/jpeg`.
        public var contentType: String?
        /// The HTTP `ETag` validator.
        public var etag: String?
        /// The HTTP `Last-Modified` validator, verbatim.
        public var lastModified: String?
        /// Any other strings (for example the response's `Cache-Control`).
        public var extra: [String: String]

        /// Creates metadata.
        public init(
            contentType: String? = nil, etag: String? = nil, lastModified: String? = nil,
            extra: [String: String] = [:]
        ) {
            self.contentType = contentType
            self.etag = etag
            self.lastModified = lastModified
            self.extra = extra
        }
    }

    /// What the cache knows about one entry.
    public struct Attributes: Sendable, Hashable {
        /// The entry's key, verbatim.
        public var key: String
        /// The value's length in bytes.
        public var size: Int
        /// When the value was stored (last overwritten).
        public var created: Date
        /// When the value was last read or written, to within a minute.
        ///
        /// A read that leaves the eviction policy's state unchanged rewrites the recorded time
        /// only once it is a minute old, so that reading a cache costs no writes.
        public var lastAccess: Date
        /// When the entry expires, if it has a time-to-live.
        public var expires: Date?
        /// Whether the entry is exempt from eviction and expiry.
        public var isPinned: Bool
        /// Whether the value lives in the index rather than in its own file.
        public var isInline: Bool
        /// The metadata stored with the value.
        public var metadata: Metadata
    }

    /// Counters since this `DiskCache` object was created (not shared between processes).
    public struct Statistics: Sendable, Hashable {
        /// Reads that returned a value.
        public var hits = 0
        /// Reads that found nothing (including expired and damaged entries).
        public var misses = 0
        /// Values stored.
        public var writes = 0
        /// Entries evicted for any ``EvictionReason``.
        public var evictions = 0
        /// Values the admission policy turned away at the store that wrote them
        /// (``EvictionReason/notAdmitted``); also counted in ``evictions``.
        public var notAdmitted = 0
        /// Bytes returned by reads.
        public var bytesRead = 0
        /// Bytes stored by writes.
        public var bytesWritten = 0
        /// Entries dropped because their file was missing, short or corrupt.
        public var damagedEntries = 0
        /// Writes through the non-throwing subscript that failed.
        public var failedWrites = 0
        /// Reads through the non-throwing subscript that failed.
        public var failedReads = 0
        /// Stores that met a full disk and were retried after evicting.
        public var diskFullRetries = 0
        /// Batches of staged changes the background writer committed (``WriteMode/writeBehind``).
        public var commits = 0
        /// Batches the background writer could not commit, and dropped whole.
        public var failedCommits = 0
        /// Staged stores and removals lost with those batches.
        public var droppedChanges = 0
        /// Bytes of values staged and not yet committed, when the statistics were read.
        public var stagedBytes = 0
        /// The most bytes of values that were ever staged at once.
        public var peakStagedBytes = 0
        /// The most bytes of staged values that were ever held in memory at once (values not
        /// waiting in a temporary file); within ``Configuration/stagingLimit`` but for a single
        /// larger value.
        public var peakStagedMemoryBytes = 0
        /// The size limit in force after a full disk lowered it, or `nil` while it is the
        /// configured ``Configuration/sizeLimit``.
        public var effectiveSizeLimit: ByteCount?

        /// `hits / (hits + misses)`, or 0 before any read.
        public var hitRatio: Double {
            hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses)
        }
    }
}
