import Foundation
import Stash

/// One network load for a cache key, shared by every request that waits for it.
final class Transfer: Sendable {
    let key: String
    private let currentPriority: LockedValue<ResourceLoader.Priority>
    private let fileWanted = LockedValue(false)

    /// Whether a request waits for the cache's file (`fileURL(for:)`): the body must then stay
    /// in the cache through its store, whatever the admission policy would decide.
    var wantsFile: Bool {
        get { fileWanted.withLock { $0 } }
        set { fileWanted.withLock { $0 = $0 || newValue } }
    }

    init(key: String, priority: ResourceLoader.Priority) {
        self.key = key
        self.currentPriority = LockedValue(priority)
    }

    /// The highest priority among the waiting requests.
    var priority: ResourceLoader.Priority {
        get { currentPriority.withLock { $0 } }
        set { currentPriority.withLock { $0 = newValue } }
    }
}

/// One request waiting for a load: its priority (which the caller may change) and where its
/// progress goes.
final class Waiter: Sendable {
    private let currentPriority: LockedValue<ResourceLoader.Priority>
    let progress: AsyncStream<TransferProgress>.Continuation?

    init(priority: ResourceLoader.Priority, progress: AsyncStream<TransferProgress>.Continuation? = nil) {
        self.currentPriority = LockedValue(priority)
        self.progress = progress
    }

    var priority: ResourceLoader.Priority {
        get { currentPriority.withLock { $0 } }
        set { currentPriority.withLock { $0 = newValue } }
    }
}

/// What a transfer hands to every request that waited for it.
struct LoadResult: Sendable {
    var metadata: DiskCache.Metadata
    var source: ResourceResponse.Source
    /// The body, when it was received in memory (small bodies, or ones not stored).
    var data: Data?
    /// Why the body is not in the disk cache, when it is not.
    var unstoredReason: StashError?
    /// The version of the key (see ``KeyVersions``) that the entry had when the transfer ended.
    var version: UInt64 = 0
    /// The stored body file, still open, for the requests that wait for data when the cache
    /// evicted the entry before they read it.
    var retainedBody: RetainedBody?
    /// The origin's failure, when the stored, stale entry is delivered instead (stale-if-error).
    var originFailure: StashError?
}

/// Coalesces concurrent loads of one key into one ``Transfer``, and cancels a transfer only
/// when every request waiting for it has been cancelled.
///
/// A lock-protected class rather than an actor: a waiter's cancellation must take effect
/// synchronously (its caller returns at once, and the last one stops the transfer), which a
/// hop onto an actor from a cancellation handler cannot promise. Lock order: coordinator,
/// then a transfer's or waiter's own lock; nothing is called out while holding it.
final class TransferCoordinator: Sendable {
    typealias Work = @Sendable (Transfer) async throws -> LoadResult

    private struct Entry: Sendable {
        var waiter: Waiter
        var continuation: CheckedContinuation<LoadResult, any Error>
        var cancellationError: StashError
    }

    private struct Shared: Sendable {
        var transfer: Transfer
        var waiters: [ObjectIdentifier: Entry]
        var task: Task<Void, Never>?
    }

    private let transfers = LockedValue([String: Shared]())
    private let scheduler: TransferScheduler
    private let onCoalesced: @Sendable (String) -> Void

    init(scheduler: TransferScheduler, onCoalesced: @escaping @Sendable (String) -> Void) {
        self.scheduler = scheduler
        self.onCoalesced = onCoalesced
    }

    /// Transfers under way.
    var activeCount: Int { transfers.withLock { $0.count } }

    /// Waits for the load of `key`, starting `work` in a new transfer unless one is under way.
    ///
    /// - Throws: What `work` threw, or `cancellationError` as soon as the calling task is
    ///   cancelled (the transfer goes on while other requests wait for it).
    func load(
        key: String, waiter: Waiter, wantsFile: Bool = false, cancellationError: StashError, work: @escaping Work
    ) async throws -> LoadResult {
        let id = ObjectIdentifier(waiter)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LoadResult, any Error>) in
                let entry = Entry(waiter: waiter, continuation: continuation, cancellationError: cancellationError)
                let (transfer, isNew) = transfers.withLock { transfers -> (Transfer, Bool) in
                    if var shared = transfers[key] {
                        if wantsFile { shared.transfer.wantsFile = true }
                        shared.waiters[id] = entry
                        transfers[key] = shared
                        Self.updatePriority(of: shared)
                        return (shared.transfer, false)
                    }
                    let transfer = Transfer(key: key, priority: waiter.priority)
                    transfer.wantsFile = wantsFile
                    transfers[key] = Shared(transfer: transfer, waiters: [id: entry], task: nil)
                    return (transfer, true)
                }
                if isNew {
                    start(transfer, work: work)
                } else {
                    scheduler.update(transfer)
                    onCoalesced(key)
                }
                // A cancellation that ran before we registered found nothing to remove.
                if Task.isCancelled { cancel(waiter: id, key: key) }
            }
        } onCancel: {
            cancel(waiter: id, key: key)
        }
    }

    /// Passes `progress` to every request waiting for `transfer`.
    func report(_ progress: TransferProgress, for transfer: Transfer) {
        let targets = transfers.withLock { transfers -> [AsyncStream<TransferProgress>.Continuation] in
            guard let shared = transfers[transfer.key], shared.transfer === transfer else { return [] }
            return shared.waiters.values.compactMap(\.waiter.progress)
        }
        for target in targets { target.yield(progress) }
    }

    /// Recomputes the priority of the transfer `waiter` waits for, after its priority changed.
    func priorityChanged(_ waiter: Waiter, key: String) {
        let id = ObjectIdentifier(waiter)
        let transfer = transfers.withLock { transfers -> Transfer? in
            guard let shared = transfers[key], shared.waiters[id] != nil else { return nil }
            Self.updatePriority(of: shared)
            return shared.transfer
        }
        if let transfer { scheduler.update(transfer) }
    }

    /// Cancels every transfer and fails every waiting request with its cancellation error.
    ///
    /// - Returns: The number of transfers cancelled.
    @discardableResult
    func cancelAll() -> Int {
        let all = transfers.withLock { transfers -> [Shared] in
            defer { transfers.removeAll() }
            return Array(transfers.values)
        }
        for shared in all {
            for entry in shared.waiters.values { entry.continuation.resume(throwing: entry.cancellationError) }
            shared.task?.cancel()
        }
        return all.count
    }

    private func start(_ transfer: Transfer, work: @escaping Work) {
        let key = transfer.key
        let task = Task {
            let result: Result<LoadResult, any Error>
            do {
                result = .success(try await work(transfer))
            } catch {
                result = .failure(error)
            }
            finish(transfer, with: result)
        }
        let isOrphaned = transfers.withLock { transfers -> Bool in
            guard transfers[key]?.transfer === transfer else { return true }
            transfers[key]?.task = task
            return false
        }
        // Every waiter was cancelled before the task was recorded.
        if isOrphaned { task.cancel() }
    }

    private func finish(_ transfer: Transfer, with result: Result<LoadResult, any Error>) {
        let entries = transfers.withLock { transfers -> [Entry] in
            // When it is no longer registered, its waiters were already answered (cancelled).
            guard let shared = transfers[transfer.key], shared.transfer === transfer else { return [] }
            transfers.removeValue(forKey: transfer.key)
            return Array(shared.waiters.values)
        }
        for entry in entries { entry.continuation.resume(with: result) }
    }

    private func cancel(waiter id: ObjectIdentifier, key: String) {
        let (entry, transferToUpdate, taskToCancel) = transfers.withLock {
            transfers -> (Entry?, Transfer?, Task<Void, Never>?) in
            guard var shared = transfers[key], let entry = shared.waiters.removeValue(forKey: id) else {
                return (nil, nil, nil)
            }
            if shared.waiters.isEmpty {
                transfers.removeValue(forKey: key)
                return (entry, nil, shared.task)
            }
            transfers[key] = shared
            Self.updatePriority(of: shared)
            return (entry, shared.transfer, nil)
        }
        entry?.continuation.resume(throwing: entry!.cancellationError)
        if let transferToUpdate { scheduler.update(transferToUpdate) }
        taskToCancel?.cancel()
    }

    private static func updatePriority(of shared: Shared) {
        shared.transfer.priority = shared.waiters.values.map(\.waiter.priority).max() ?? shared.transfer.priority
    }
}
