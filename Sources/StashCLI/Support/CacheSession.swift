#if Tool
    import Foundation
    import Stash

    /// An open cache directory for the duration of one command: the `DiskCache`, the size limit in
    /// force and where it came from, and the statistics to add to ``ToolState`` on close.
    final class CacheSession: Sendable {
        /// Where the size limit in force came from.
        enum LimitSource: String, Codable, Sendable {
            /// `--size-limit` on this command line.
            case option
            /// The limit last given with `--size-limit` for this directory.
            case remembered
            /// Neither: the default.
            case `default`
        }

        /// The limit used when none was ever given.
        static let defaultSizeLimit = ByteCount.megabytes(150)

        /// The cache directory.
        let directory: URL
        /// The open cache.
        let cache: DiskCache
        /// The size limit in force.
        let sizeLimit: ByteCount
        /// Where ``sizeLimit`` came from.
        let limitSource: LimitSource
        /// Counters to add to the directory's ``ToolStatistics`` on close.
        let pending = Locked(ToolStatistics())
        /// Entries evicted while the session was open.
        let evictions: Locked<Int>
        /// The rebuild of the index that opening the cache did, if any.
        let rebuild: DiskCache.IndexRebuild?
        private let rememberedLimit: ByteCount?

        /// Opens the cache that `options` name.
        ///
        /// A `--size-limit` below what the unpinned entries hold evicts at once, so that the limit
        /// is true when the command ends.
        ///
        /// Opening rebuilds a lost or damaged index from the value files, with a progress line on a
        /// terminal and a warning on standard error; a directory that cannot be written opens
        /// read-only.
        ///
        /// - Parameter mustExist: Whether a missing directory is an error (commands that only
        ///   read) rather than created.
        /// - Throws: ``CLIError`` with status 74 when the directory cannot be opened, or does not
        ///   exist and `mustExist`.
        init(options: CacheOptions, mustExist: Bool = false) throws {
            let directory = options.directory
            self.directory = directory
            var isDirectory: ObjCBool = false
            if mustExist && !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
                throw CLIError.io(
                    "No cache at \(directory.path): the directory does not exist. Check --dir, or store something first with 'stash put'."
                )
            }
            let rememberedLimit = try ToolState.load(from: directory).sizeLimit.map { ByteCount($0) }
            self.rememberedLimit = rememberedLimit
            if let limit = options.sizeLimit {
                (sizeLimit, limitSource) = (limit, .option)
            } else if let rememberedLimit {
                (sizeLimit, limitSource) = (rememberedLimit, .remembered)
            } else {
                (sizeLimit, limitSource) = (Self.defaultSizeLimit, .default)
            }
            let evictions = Locked(0)
            self.evictions = evictions
            var configuration = DiskCache.Configuration(sizeLimit: sizeLimit)
            // An application's cache keeps its policy unless the user asks for another one.
            if let policy = options.evictionPolicy ?? DiskCache.storedEvictionPolicy(in: directory) {
                configuration.evictionPolicy = policy
            }
            configuration.onEviction = { _ in evictions.withLock { $0 += 1 } }
            let rebuilt = Locked(false)
            let showsProgress = Terminal.isStandardErrorATerminal
            configuration.onEvent = { event in
                switch event {
                case .rebuildingIndex(let scanned) where showsProgress:
                    Terminal.printToStandardError(
                        "\rstash: rebuilding the index of \(directory.path): \(scanned) files scanned")
                case .indexRebuilt:
                    if showsProgress { Terminal.printToStandardError("\r\u{1B}[K") }
                    rebuilt.withLock { $0 = true }
                default:
                    break
                }
            }
            do {
                cache = try DiskCache(directory: directory, configuration: configuration)
                if limitSource == .option {
                    let unpinned = try cache.totalSize.bytes - cache.pinnedSize.bytes
                    if unpinned > sizeLimit.bytes { try cache.trim(toSize: sizeLimit) }
                }
            } catch {
                throw CLIError(error, while: "opening the cache in \(directory.path)")
            }
            rebuild = rebuilt.withLock { $0 } ? cache.lastIndexRebuild : nil
            if let rebuild {
                Terminal.printError(
                    "The index of \(directory.path) was \(rebuild.reason == "requested" ? "rebuilt" : "lost or damaged (\(rebuild.reason)) and was rebuilt") from its files: \(Output.count(rebuild.recovered, "entry", "entries")) recovered, \(rebuild.lost) lost"
                        + (rebuild.movedTo.map { "; the old index was moved to \($0)." } ?? "."))
            }
        }

        /// Adds to the counters recorded on close.
        func record(_ change: (inout ToolStatistics) -> Void) {
            pending.withLock { change(&$0) }
        }

        /// Commits the cache's staged writes, closes it and records the limit and statistics in
        /// the directory's ``ToolState``.
        ///
        /// - Throws: The `StashError` of a commit that failed (the command's writes were not
        ///   kept), or ``CLIError`` when the state file cannot be written.
        func close() throws {
            // Stores return before their commit: the command succeeds only once they are in.
            let committed = Result { try cache.flush() }
            cache.close()
            try committed.get()
            // A read-only directory keeps nothing of this session.
            guard !cache.isReadOnly else { return }
            var statistics = pending.withLock { $0 }
            statistics.evictions = evictions.withLock { $0 }
            let limit = limitSource == .option ? sizeLimit : rememberedLimit
            let unchanged = statistics == ToolStatistics() && limit == rememberedLimit
            guard !unchanged else { return }
            try ToolState.update(in: directory) { state in
                state.sizeLimit = limit?.bytes
                state.statistics.add(statistics)
            }
        }
    }
#endif
