import Stash

@testable import StashHTTP

/// A value that tests can wait on: `wait(until:)` resumes as soon as an update makes the
/// condition true, so that no test sleeps to synchronise.
final class Observed<Value: Sendable>: Sendable {
    private struct Waiter {
        var id: Int
        var condition: @Sendable (Value) -> Bool
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [Waiter] = []
        var nextID = 0
    }

    private let state: LockedValue<State>

    init(_ value: Value) {
        state = LockedValue(State(value: value))
    }

    var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes the waiters whose condition now holds.
    func update(_ change: (inout Value) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            change(&state.value)
            let value = state.value
            let (met, unmet) = (
                state.waiters.filter { $0.condition(value) }, state.waiters.filter { !$0.condition(value) }
            )
            state.waiters = unmet
            return met.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once `condition` holds; throws `CancellationError` if the test is cancelled first
    /// (for example by its time limit).
    func wait(until condition: @escaping @Sendable (Value) -> Bool) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let isMet = state.withLock { state -> Bool in
                    if condition(state.value) { return true }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return false
                }
                if isMet { continuation.resume() }
                if Task.isCancelled { cancel(id) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    private func cancel(_ id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume(throwing: CancellationError())
    }
}

/// A gate that a server response waits behind until the test opens it.
final class Gate: Sendable {
    private let isOpen = Observed(false)

    func open() { isOpen.update { $0 = true } }

    func wait() async throws { try await isOpen.wait { $0 } }
}

/// Records a loader's events so that a test can wait for one.
final class EventLog: Sendable {
    let events = Observed([ResourceLoader.Event]())

    var handler: @Sendable (ResourceLoader.Event) -> Void {
        { [events] event in events.update { $0.append(event) } }
    }

    /// Waits until `count` events match `predicate`.
    func wait(for count: Int, _ predicate: @escaping @Sendable (ResourceLoader.Event) -> Bool) async throws {
        try await events.wait { $0.filter(predicate).count >= count }
    }

    func count(_ predicate: (ResourceLoader.Event) -> Bool) -> Int {
        events.value.filter(predicate).count
    }
}

extension ResourceLoader.Event {
    var isQueued: Bool {
        if case .queued = self { return true }
        return false
    }

    var isCoalesced: Bool {
        if case .coalesced = self { return true }
        return false
    }

    var outcome: ResourceLoader.TransferOutcome? {
        if case .finished(_, let outcome) = self { return outcome }
        return nil
    }
}
