import Foundation

extension DiskCache {
    /// When stores, removals and trims reach the index.
    public enum WriteMode: Sendable, Hashable {
        /// Changes are staged in memory and the call returns; a background writer commits the
        /// staged changes in one transaction per batch, within
        /// ``Configuration/maxWriteDelay`` or at once when a batch is full (the default).
        ///
        /// Reads through this object see staged changes at once; other processes (and other
        /// `DiskCache` objects on the same directory) see them after the commit. `flush()` is
        /// the barrier; a store with `pinned: true`, ``pin(_:)``, ``unpin(_:)`` and ``close()``
        /// commit before they return, and so does every store under ``Durability/durable``. A
        /// crash loses at most the unflushed, unpinned changes of the last
        /// ``Configuration/maxWriteDelay``: later misses, never a wrong or torn value. Eviction
        /// runs when a batch commits (at once when a store takes the cache over a limit), and
        /// decides as if each store had evicted when it was made: the batch applies the reads
        /// recorded between its stores in request order, and a read that follows a store that
        /// took the cache over a limit waits for that store's commit, so that it does not find
        /// an entry the store evicted. However soon or late the writer runs, the cache keeps
        /// the same entries.
        case writeBehind
        /// Every store and removal commits its own transaction before it returns, so that
        /// other processes see it at once.
        case immediate
    }

    /// The outcome of a read of the staging area.
    enum StagedRead {
        /// Nothing is staged for the key: the index has the answer.
        case notStaged
        /// A removal is staged, or the staged value has expired.
        case absent
        /// The staged value's bytes.
        case value(Data)
        /// The staged value's file was published meanwhile: look again.
        case moved
    }

    var writesBehind: Bool { configuration.writeMode == .writeBehind }

    /// The most bytes of values staged in memory at once.
    var stagingLimitBytes: Int {
        if let limit = configuration.stagingLimit { return limit.bytes }
        return max(1, min(8 << 20, configuration.sizeLimit.bytes / 20))
    }

    /// The most bytes of values staged at once, those waiting in temporary files included: 5 %
    /// of the size limit (what the disk may hold beyond it until the writer evicts), and never
    /// less than ``stagingLimitBytes``.
    var stagedFileLimitBytes: Int {
        max(stagingLimitBytes, configuration.sizeLimit.bytes / 20)
    }

    /// The most changes staged at once, so that a batch of removals stays bounded too.
    static let stagingCountLimit = 8192
    /// The most staged values waiting in temporary files at once: each keeps its descriptor
    /// open (and locked) until its commit, so that the process stays far within a soft limit of
    /// 1024 open files (as many as an 8 MiB bound allowed values of 32 KiB).
    static let stagedFileCountLimit = 256
    /// A batch this long is committed at once instead of after the delay.
    static let fullBatchCount = 2048

    /// Commits everything staged so far, and throws the failure of any batch that the
    /// background writer dropped since the last call that reported one.
    ///
    /// Returns when every store and removal that returned before the call is in the index,
    /// where other processes see it. Under ``WriteMode/immediate`` there is nothing to commit.
    ///
    /// - Throws: ``StashError`` from the failed commit (``StashError/Code/readOnly``,
    ///   ``StashError/Code/diskFull``, ``StashError/Code/busy``, ``StashError/Code/io``): its
    ///   batch was dropped whole.
    /// - Complexity: O(*s*) for *s* staged changes, in one transaction.
    public func flush() throws {
        commitStagedNow()
        try throwPendingFailure()
    }

    /// Commits everything staged so far without blocking the caller's executor.
    ///
    /// - Throws: As `flush()`.
    /// - Complexity: As `flush()`.
    public func flush() async throws {
        try await offload { try self.flush() }
    }

    /// Stages a value for the writer, or commits it now when it is pinned or the cache is
    /// durable; the caller has written a `.file` source's temporary file.
    ///
    /// With `waits` false it returns `false`, having staged nothing, where it would wait for the
    /// writer (the staging area is full); the caller keeps `source`.
    @discardableResult
    func stageStore(
        _ source: ValueSource, size: Int, checksum: UInt64, forKey key: String, timeToLive: Duration?,
        pinned: Bool?, metadata: Metadata, mayBeTurnedAway: Bool, waits: Bool = true
    ) throws -> Bool {
        do {
            // The index keeps seconds since 1970 as a double: a staged entry's dates are what its
            // committed row will read back, so an attribute does not change at the commit.
            let now = Date(timeIntervalSince1970: configuration.clock().timeIntervalSince1970)
            let expires = try Self.expiry(
                forKey: key, timeToLive: timeToLive ?? configuration.defaultTimeToLive, now: now)
            let value = StagingArea.StagedValue(
                source: source, size: size, checksum: checksum, created: now, expires: expires, pinned: pinned,
                metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
            guard try stage(.store(value), forKey: key, waits: waits) else { return false }
        } catch {
            if case .file(let temporary) = source {
                discardTemporary(path: temporary.path, descriptor: temporary.descriptor)
            }
            throw error
        }
        counters.withLock { stats in
            stats.writes += 1
            stats.bytesWritten += size
        }
        if pinned == true || configuration.durability == .durable {
            try flush()
        }
        return true
    }

    /// Stages a change and schedules the writer; waits for the writer while the staging area
    /// is full, or with `waits` false returns `false` then, having staged nothing (and when a
    /// background commit's failure waits to be thrown, which it leaves in place).
    @discardableResult
    func stage(_ change: StagingArea.Change, forKey key: String, waits: Bool = true) throws -> Bool {
        try wrapIndexErrors { try index.throwIfReadOnly() }
        let keyBytes = Self.utf8(key)
        let (size, memorySize, holdsFile): (Int, Int, Bool)
        if case .store(let value) = change {
            (size, memorySize, holdsFile) = (value.size, value.memorySize, value.holdsFile)
        } else {
            (size, memorySize, holdsFile) = (0, 0, false)
        }
        let limit = stagingLimitBytes
        let fileLimit = stagedFileLimitBytes
        let sizeLimit = effectiveSizeLimit.bytes
        if case .remove = change { accessLog.withLock { $0.forget(keyBytes) } }
        while true {
            // A caller that may not wait leaves an earlier commit's failure to the next one that
            // may: its store recovers from a full disk (``withDiskFullRecovery(size:forKey:_:)``).
            if waits { try throwPendingFailure() }
            let schedule = staging.withLock { staging -> AccessFlushSchedule?? in
                guard
                    waits || staging.failure == nil,
                    staging.admits(
                        size: size, memorySize: memorySize, holdsFile: holdsFile, memoryLimit: limit,
                        limit: fileLimit, fileLimit: Self.stagedFileCountLimit, countLimit: Self.stagingCountLimit)
                else {
                    return .some(nil)
                }
                // Numbered and queued under one lock (the log's inside the staging area's, the
                // only place the two nest): a writer that sees a read numbered after this change
                // sees the change too.
                let sequence = accessLog.withLock { $0.numberChange() }
                staging.stage(change, key: key, keyBytes: keyBytes, sequence: sequence)
                // A full batch, or one that needs eviction (which should not wait), commits now.
                let evicts = staging.exceeds(sizeLimit: sizeLimit, countLimit: configuration.countLimit)
                if evicts { staging.evictingChange = sequence }
                let isFull = evicts || staging.bytes >= limit || staging.queuedCount >= Self.fullBatchCount
                switch staging.schedule {
                case .immediate: return nil
                case .delayed:
                    guard isFull else { return nil }
                    staging.schedule = .immediate
                case .idle:
                    staging.schedule = isFull ? .immediate : .delayed
                }
                return staging.schedule
            }
            switch schedule {
            case .some(nil):
                guard waits else { return false }
                // Back-pressure: commit what is staged on this thread, after the writer's batch.
                commitStagedNow()
            case .some(.some(let schedule)):
                scheduleStagedCommit(after: schedule == .immediate ? .zero : configuration.maxWriteDelay)
                return true
            case nil:
                return true
            }
        }
    }

    /// The newest staged change of `key`, if any, once no staged change that may evict is left
    /// (a read waits for its commit, as it would find entries the policy has evicted).
    ///
    /// With `waitingForEviction` false it answers at once: the read may then find an entry that
    /// the waiting commit evicts. The cache keeps the same entries either way (the read's access,
    /// numbered after the change, is applied after its evictions and finds no row).
    func stagedChange(forKey key: String, waitingForEviction: Bool = true) -> StagingArea.Operation? {
        while true {
            let (operation, mustWait) = staging.withLock { staging -> (StagingArea.Operation?, Bool) in
                if staging.isEmpty { return (nil, false) }
                if staging.evictingChange != nil && waitingForEviction { return (nil, true) }
                return (staging.change(forKey: Self.utf8(key)), false)
            }
            guard mustWait else { return operation }
            commitStagedNow()
        }
    }

    /// What a read of `key` finds in the staging area.
    func readStaged(_ key: String) throws -> StagedRead {
        guard let operation = stagedChange(forKey: key) else { return .notStaged }
        guard case .store(let value) = operation.change,
            value.isLive(at: configuration.clock().timeIntervalSince1970)
        else { return .absent }
        switch value.source {
        case .inline(let data):
            return .value(data)
        case .file(let temporary):
            let result: POSIXFile.ReadResult
            do {
                result = try POSIXFile.read(temporary.path, expectedSize: value.size)
            } catch {
                throw readError(error, "Cannot read the staged value for '\(key)' from \(temporary.path)")
            }
            guard case .bytes(let data) = result else {
                // The writer renamed the file into place: its commit decides where the value is.
                commitStagedNow()
                return .moved
            }
            return .value(data)
        }
    }

    /// Throws, once, the failure of a batch that the writer dropped.
    func throwPendingFailure() throws {
        let failure = staging.withLock { staging -> StashError? in
            defer { staging.failure = nil }
            return staging.failure
        }
        guard let failure else { return }
        throw failure
    }

    /// Commits what is staged on the writer's queue (after any batch it is committing) and
    /// waits for it; on that queue itself, commits directly.
    func commitStagedNow() {
        // A batch that already left the staging area may still be removing the files it replaced.
        guard writesBehind, staging.withLock({ !$0.isEmpty || $0.isCommitting }) else { return }
        if DispatchQueue.getSpecific(key: writerQueueKey) != nil {
            runStagedCommit()
        } else {
            writerQueue.sync { runStagedCommit() }
        }
    }

    /// Runs the writer on its queue after `delay`.
    ///
    /// The job holds the cache weakly: a cache deallocated meanwhile commits in `deinit`.
    private func scheduleStagedCommit(after delay: Duration) {
        let job: @Sendable () -> Void = { [weak self] in self?.runStagedCommit() }
        if delay <= .zero {
            writerQueue.async(execute: job)
        } else {
            writerQueue.asyncAfter(deadline: .now() + delay.seconds, execute: job)
        }
    }

    /// Commits the queued changes as one batch.
    ///
    /// Runs on the writer's queue (or in `deinit`), so that batches commit in the order they
    /// were staged.
    func runStagedCommit() {
        let batch = staging.withLock { $0.takeBatch() }
        guard !batch.isEmpty else { return }
        // Forgotten inside the committing transaction's lock (see `commitOnce`), or here when
        // the batch was dropped.
        defer { staging.withLock { $0.endBatch() } }
        let failure = commit(batch)
        writeBehindHooks.withLock { $0.batchDidCommit }?()
        staging.withLock { staging in
            if failure != nil { staging.finish(batch) }
            if let failure { staging.failure = failure }
        }
        guard let failure else { return }
        counters.withLock { stats in
            stats.failedCommits += 1
            stats.droppedChanges += batch.count
        }
        configuration.onEvent?(.commitFailed(changes: batch.count, error: failure))
    }

    /// Commits a batch in one transaction: the newest change of each key, in staging order.
    ///
    /// A failure rolls the whole batch back and removes the files it had published, so that
    /// nothing of it is left half-done; it is returned, not thrown, for the caller to report.
    /// A full disk first evicts room (as a store on the caller's thread does) and retries.
    private func commit(_ batch: [StagingArea.Operation]) -> StashError? {
        var newest: [Data: Int] = Dictionary(minimumCapacity: batch.count)
        for (position, operation) in batch.enumerated() { newest[operation.keyBytes] = position }
        // A value replaced within the batch never reaches the index.
        var bytes = 0
        for (position, operation) in batch.enumerated() {
            guard case .store(let value) = operation.change else { continue }
            if newest[operation.keyBytes] == position {
                bytes += value.size
            } else if case .file(let temporary) = value.source {
                discardTemporary(path: temporary.path, descriptor: temporary.descriptor)
            }
        }
        var failure: StashError?
        for round in 0..<3 {
            var pending: [PendingPublish?] = batch.indices.map { position in
                guard newest[batch[position].keyBytes] == position, case .store(let value) = batch[position].change
                else { return nil }
                return PendingPublish(value.source, in: self)
            }
            do {
                try writeDeferredFiles(batch, into: &pending)
                try commitOnce(batch, newest: newest, pending: &pending)
                return nil
            } catch {
                let error = index.indexError(error)
                failure = error
                restoreAfterFailedCommit(pending)
                guard error.code == .diskFull, round < 2, (try? makeRoomAfterFullDisk(for: bytes, round: round)) == true
                else { break }
            }
        }
        // Dropped: the staged files go too.
        for (position, operation) in batch.enumerated() where newest[operation.keyBytes] == position {
            if case .store(let value) = operation.change, case .file(let temporary) = value.source {
                discardTemporary(path: temporary.path, descriptor: temporary.descriptor)
            }
        }
        return failure
    }

    /// Writes the files of values staged in memory though big enough for a file
    /// (``Configuration/writesValueFilesInBackground``), on the writer's thread.
    private func writeDeferredFiles(_ batch: [StagingArea.Operation], into pending: inout [PendingPublish?]) throws {
        guard configuration.writesValueFilesInBackground else { return }
        for (position, operation) in batch.enumerated() where pending[position] != nil {
            guard case .store(let value) = operation.change, case .inline(let data) = value.source,
                data.count >= configuration.inlineThreshold.bytes
            else { continue }
            var published = PendingPublish(.file(try temporaryFile(holding: data, forKey: operation.key)), in: self)
            published.isStaged = false  // written here: a failed commit removes it
            pending[position] = published
        }
    }

    private func commitOnce(
        _ batch: [StagingArea.Operation], newest: [Data: Int], pending: inout [PendingPublish?]
    ) throws {
        var oldFiles: [String] = []
        var victims: [Victim] = []
        // The batch leaves the staging area as it commits, before the writer's lock is released:
        // a later transaction on another thread (`removeAll`, `trim`, a pin) may change the same
        // rows, and a read that still found the staged change would return what that
        // transaction replaced (and a `Cache` would keep it in memory).
        try index.write(afterCommit: { self.staging.withLock { $0.finish(batch) } }) { db in
            // The reads recorded before the next batch's first change, applied in request
            // order between this batch's changes (as the policy would see them one by one).
            let accesses = takeAccesses { staging.withLock { $0.firstQueuedChange } }
            var applied = 0
            for (position, operation) in batch.enumerated() {
                var due = applied
                while due < accesses.count && accesses[due].access.sequence < operation.sequence { due += 1 }
                if due > applied {
                    try applyAccesses(Array(accesses[applied..<due]), in: db)
                    applied = due
                }
                switch operation.change {
                case .store(let value):
                    // A value replaced within the batch never reaches the index; a removal
                    // always runs, so that a key removed and stored again is a new entry.
                    guard newest[operation.keyBytes] == position else { continue }
                    // A value whose file the writer wrote is published from that file.
                    let source = pending[position]!.temporary.map { ValueSource.file($0) } ?? value.source
                    let outcome = try publishRow(
                        source, size: value.size, checksum: value.checksum, forKey: operation.key,
                        now: value.created, expires: value.expires, pinned: value.pinned,
                        metadata: value.metadata, mayBeTurnedAway: value.mayBeTurnedAway,
                        pending: &pending[position]!, in: db)
                    if let replaced = outcome.replaced { oldFiles.append(replaced) }
                    victims += outcome.victims
                case .remove:
                    if let file = try removeRow(forKey: operation.keyBytes, in: db), let file {
                        oldFiles.append(file)
                    }
                }
            }
            if applied < accesses.count { try applyAccesses(Array(accesses[applied...]), in: db) }
            let committed = try db.first("SELECT size - pinned_size, count - pinned_count FROM totals WHERE id = 1") {
                (size: $0.int(0), count: $0.int(1))
            }
            if let committed { staging.withLock { $0.committed = committed } }
        }
        for case let published? in pending {
            if let temporary = published.temporary { Foundation.close(temporary.descriptor) }
        }
        // After commit no reader reaches these files through the index. A failed unlink
        // leaves an orphan that the collector removes later.
        for file in oldFiles { removeValueFile(file) }
        counters.withLock { $0.commits += 1 }
        finishEviction(victims)
    }

    /// Undoes the file moves of a batch whose transaction rolled back: a staged value's file
    /// goes back to its temporary name (still locked, for a retry or to be discarded), a file
    /// written during the transaction (a pinned inline value) is removed.
    private func restoreAfterFailedCommit(_ pending: [PendingPublish?]) {
        for case let published? in pending {
            guard let temporary = published.temporary, let fileName = published.fileName else { continue }
            guard published.isStaged else {
                discardFailedPublish(published)
                continue
            }
            guard published.renamed else { continue }
            try? POSIXFile.remove(sidecarPath(forFile: fileName))  // else an orphan
            if (try? POSIXFile.rename(path(forFile: fileName), temporary.path)) == nil {
                try? POSIXFile.remove(path(forFile: fileName))  // else an orphan; the value is lost
            }
        }
    }
}
