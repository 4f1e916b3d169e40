import Stash

/// Admits transfers under a concurrency limit, in priority order, and holds them while
/// suspended.
///
/// A lock-protected class rather than an actor so that priority changes, `suspend()` and
/// cancellation take effect synchronously, in the caller's order.
final class TransferScheduler: Sendable {
    private struct Waiting {
        var id: ObjectIdentifier
        var priority: ResourceLoader.Priority
        var sequence: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var limit: Int
        var running = 0
        var isSuspended = false
        /// How many ``holdingAdmissions(_:)`` calls are running: none admits while one is.
        var holds = 0
        var queue: [Waiting] = []
        var nextSequence: UInt64 = 0
    }

    private let state: LockedValue<State>

    init(limit: Int) {
        state = LockedValue(State(limit: limit))
    }

    /// Whether new transfers are held.
    var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Transfers waiting for a slot.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// Transfers holding a slot.
    var runningCount: Int { state.withLock { $0.running } }

    /// Waits for a slot for `transfer`; every successful call must be balanced by ``release()``.
    ///
    /// - Parameter onQueued: Called (outside the lock) when the transfer has to wait.
    /// - Throws: `CancellationError` when the task is cancelled while waiting; it then holds no slot.
    func acquire(_ transfer: Transfer, onQueued: () -> Void) async throws {
        let id = ObjectIdentifier(transfer)
        let admitted = state.withLock { state -> Bool in
            guard !state.isSuspended, state.holds == 0, state.running < state.limit, state.queue.isEmpty else {
                return false
            }
            state.running += 1
            return true
        }
        if admitted { return }
        onQueued()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                    state.queue.append(
                        Waiting(
                            id: id, priority: transfer.priority, sequence: state.nextSequence,
                            continuation: continuation))
                    state.nextSequence += 1
                    return Self.admit(&state)
                }
                for continuation in ready { continuation.resume() }
                // A cancellation that ran before we were queued found nothing to remove.
                if Task.isCancelled { cancelWaiting(id) }
            }
        } onCancel: {
            cancelWaiting(id)
        }
    }

    /// Gives back a slot taken by ``acquire(_:onQueued:)`` and starts the next waiting transfer.
    func release() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.running -= 1
            return Self.admit(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Moves a waiting transfer to its current ``Transfer/priority``; no effect once it runs.
    ///
    /// Reading the priority under the lock makes concurrent updates order-independent: the
    /// last one applies the latest value.
    ///
    /// - Complexity: O(*q*) for *q* waiting transfers.
    func update(_ transfer: Transfer) {
        let id = ObjectIdentifier(transfer)
        state.withLock { state in
            if let index = state.queue.firstIndex(where: { $0.id == id }) {
                state.queue[index].priority = transfer.priority
            }
        }
    }

    /// Holds transfers that have not started yet; running ones go on.
    func suspend() {
        state.withLock { $0.isSuspended = true }
    }

    /// Lets held transfers start again.
    func resume() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.isSuspended = false
            return Self.admit(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Runs `body` with no waiting transfer admitted meanwhile (slots released during it are
    /// handed out after it), whatever ``suspend()`` says.
    func holdingAdmissions<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.holds += 1 }
        defer {
            let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                state.holds -= 1
                return Self.admit(&state)
            }
            for continuation in ready { continuation.resume() }
        }
        return try body()
    }

    private func cancelWaiting(_ id: ObjectIdentifier) {
        let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let index = state.queue.firstIndex(where: { $0.id == id }) else { return nil }
            return state.queue.remove(at: index).continuation
        }
        removed?.resume(throwing: CancellationError())
    }

    /// Takes as many waiting transfers as there are free slots, highest priority first, then first come.
    ///
    /// O(*q*) per admitted transfer: queues are short, and this keeps priority changes O(*q*) without a
    /// heap's re-sifting.
    private static func admit(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        var ready: [CheckedContinuation<Void, any Error>] = []
        while !state.isSuspended, state.holds == 0, state.running < state.limit, !state.queue.isEmpty {
            var best = 0
            for index in state.queue.indices.dropFirst() {
                let candidate = state.queue[index]
                let current = state.queue[best]
                if candidate.priority > current.priority
                    || (candidate.priority == current.priority && candidate.sequence < current.sequence)
                {
                    best = index
                }
            }
            ready.append(state.queue.remove(at: best).continuation)
            state.running += 1
        }
        return ready
    }
}
