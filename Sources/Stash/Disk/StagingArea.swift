import Foundation

/// Stores and removals that returned to their callers and wait for the background writer to
/// commit them (``DiskCache/WriteMode/writeBehind``).
///
/// Reads look a key up here before the index: the newest change of each key stays visible
/// until its batch has committed, so that a read never falls between the staging area and the
/// index.
struct StagingArea {
    /// A value staged for storing.
    struct StagedValue {
        var source: DiskCache.ValueSource
        var size: Int
        var checksum: UInt64
        var created: Date
        var expires: Double?
        var pinned: Bool?
        var metadata: DiskCache.Metadata
        var mayBeTurnedAway: Bool

        /// Whether a read at `now` sees the value (a pinned value never expires).
        func isLive(at now: Double) -> Bool {
            pinned == true || expires.map { $0 > now } ?? true
        }

        /// The bytes it holds in memory: its own, unless they wait in a temporary file.
        var memorySize: Int {
            if case .inline = source { return size }
            return 0
        }

        /// Whether it waits in a temporary file (and holds its open, locked descriptor).
        var holdsFile: Bool {
            if case .file = source { return true }
            return false
        }
    }

    /// What a staged change does to its key.
    enum Change {
        case store(StagedValue)
        case remove
    }

    /// One staged change, in staging order.
    struct Operation {
        /// Its place among the changes and the reads recorded by ``AccessLog``.
        var sequence: Int
        var key: String
        var keyBytes: Data
        var change: Change

        var size: Int {
            if case .store(let value) = change { return value.size }
            return 0
        }

        /// The bytes it holds in memory (``StagedValue/memorySize``).
        var memorySize: Int {
            if case .store(let value) = change { return value.memorySize }
            return 0
        }

        /// Whether it holds a temporary file (``StagedValue/holdsFile``).
        var holdsFile: Bool {
            if case .store(let value) = change { return value.holdsFile }
            return false
        }
    }

    /// The newest change of each key, staged or being committed.
    private(set) var latest: [Data: Operation] = [:]
    /// Changes not yet taken by the writer, oldest first.
    private(set) var queue: [Operation] = []
    /// Bytes of values staged or being committed.
    private(set) var bytes = 0
    /// The part of `bytes` held in memory (values not written to a temporary file).
    private(set) var memoryBytes = 0
    /// The most `bytes` ever was.
    private(set) var peakBytes = 0
    /// The most `memoryBytes` ever was.
    private(set) var peakMemoryBytes = 0
    /// Staged values that wait in temporary files, each with its descriptor open.
    private(set) var files = 0
    /// Whether, and how soon, the writer is scheduled.
    var schedule = AccessFlushSchedule.idle
    /// The failure of the last batch the writer dropped, until a caller is told.
    var failure: StashError?
    /// The unpinned bytes and entries in the index after the writer's last commit (this
    /// process's view): a change that takes the staged total over a limit is committed at once.
    var committed: (size: Int, count: Int) = (0, 0)

    /// The newest change staged while the staged stores, on top of what is committed, exceeded
    /// a limit: its commit may evict, so reads wait for it (``DiskCache/stagedChange(forKey:)``)
    /// rather than find entries the policy has evicted by then.
    var evictingChange: Int?
    /// The first and last change of the batch being committed.
    private var inFlight: (first: Int, last: Int)?
    /// Stores staged or being committed.
    private var stores = 0

    /// Whether the staged stores, on top of what is committed, exceed a limit.
    ///
    /// An upper bound (a store that replaces a value counts whole), so that every commit that
    /// evicts follows a change for which this was true.
    func exceeds(sizeLimit: Int, countLimit: Int?) -> Bool {
        committed.size + bytes > sizeLimit || countLimit.map { committed.count + stores > $0 } ?? false
    }

    /// The number of the oldest change not committed yet (being committed or staged), if any.
    var firstUncommittedChange: Int? { inFlight?.first ?? queue.first?.sequence }

    /// The number of the oldest change staged after the batch being committed, if any.
    var firstQueuedChange: Int? { queue.first?.sequence }

    var isEmpty: Bool { latest.isEmpty }
    /// Whether the writer is working on a batch: from ``takeBatch()`` until it has also removed
    /// the files the batch replaced or evicted and reported its evictions (``endBatch()``),
    /// which is after the batch left ``latest``.
    var isCommitting: Bool { batchesInProgress > 0 }
    private var batchesInProgress = 0
    var queuedCount: Int { queue.count }

    /// Whether a value of `size` bytes (`memorySize` of them held in memory, in a temporary file
    /// if `holdsFile`) fits now: at most `memoryLimit` bytes in memory, `limit` bytes in all,
    /// `fileLimit` temporary files and `countLimit` staged changes; alone, any value fits.
    func admits(
        size: Int, memorySize: Int, holdsFile: Bool, memoryLimit: Int, limit: Int, fileLimit: Int, countLimit: Int
    ) -> Bool {
        latest.isEmpty
            || (memoryBytes + memorySize <= memoryLimit && bytes + size <= limit && queue.count < countLimit
                && (!holdsFile || files < fileLimit))
    }

    /// The newest staged change of `key`, if any.
    func change(forKey keyBytes: Data) -> Operation? {
        latest.isEmpty ? nil : latest[keyBytes]
    }

    /// Stages a change numbered `sequence` (``AccessLog/numberChange()``: after every read
    /// recorded before it), after every change staged so far.
    mutating func stage(_ change: Change, key: String, keyBytes: Data, sequence: Int) {
        let operation = Operation(sequence: sequence, key: key, keyBytes: keyBytes, change: change)
        queue.append(operation)
        latest[keyBytes] = operation
        bytes += operation.size
        memoryBytes += operation.memorySize
        if operation.holdsFile { files += 1 }
        peakBytes = max(peakBytes, bytes)
        peakMemoryBytes = max(peakMemoryBytes, memoryBytes)
        if case .store = change { stores += 1 }
    }

    /// Hands the queued changes to the writer; they stay visible to reads until ``finish(_:)``.
    mutating func takeBatch() -> [Operation] {
        schedule = .idle
        defer { queue = [] }
        if !queue.isEmpty { batchesInProgress += 1 }
        if let first = queue.first, let last = queue.last { inFlight = (first.sequence, last.sequence) }
        return queue
    }

    /// The writer is done with the batch it took (see ``isCommitting``).
    mutating func endBatch() {
        batchesInProgress -= 1
    }

    /// Forgets a batch that was committed (or dropped): reads now go to the index for its keys,
    /// unless a newer change was staged meanwhile.
    mutating func finish(_ batch: [Operation]) {
        for operation in batch {
            bytes -= operation.size
            memoryBytes -= operation.memorySize
            if operation.holdsFile { files -= 1 }
            if case .store = operation.change { stores -= 1 }
            if latest[operation.keyBytes]?.sequence == operation.sequence {
                latest[operation.keyBytes] = nil
            }
        }
        if let last = batch.last {
            if let evicting = evictingChange, evicting <= last.sequence { evictingChange = nil }
            if inFlight?.last == last.sequence { inFlight = nil }
        }
    }
}

/// Test hooks that hold the write-behind writer or a `removeAll` at a chosen point, to force an
/// interleaving; `nil` fields do nothing.
struct WriteBehindHooks {
    /// Called on the writer's queue after a batch's transaction committed (or was dropped).
    var batchDidCommit: (@Sendable () -> Void)?
    /// Called by `removeAll` after it committed what was staged, before its own transaction.
    var removeAllWillDelete: (@Sendable () -> Void)?
}
