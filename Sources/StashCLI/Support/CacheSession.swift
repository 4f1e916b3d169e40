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
    private let rememberedLimit: ByteCount?

    /// Opens the cache that `options` name.
    ///
    /// A `--size-limit` below what the unpinned entries hold evicts at once, so that the limit
    /// is true when the command ends.
    ///
    /// - Throws: ``CLIError`` with status 74 when the directory cannot be opened.
    init(options: CacheOptions) throws {
        let directory = options.directory
        self.directory = directory
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
        do {
            cache = try DiskCache(directory: directory, configuration: configuration)
            if limitSource == .option {
                let unpinned = try cache.totalSize.bytes - cache.pinnedSize.bytes
                if unpinned > sizeLimit.bytes { try cache.trim(toSize: sizeLimit) }
            }
        } catch {
            throw CLIError(error, while: "opening the cache in \(directory.path)")
        }
    }

    /// Adds to the counters recorded on close.
    func record(_ change: (inout ToolStatistics) -> Void) {
        pending.withLock { change(&$0) }
    }

    /// Closes the cache and records the limit and statistics in the directory's ``ToolState``.
    ///
    /// - Throws: ``CLIError`` when the state file cannot be written.
    func close() throws {
        cache.close()
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
