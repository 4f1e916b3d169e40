import Foundation
import Stash

/// The loader's background work (stale-while-revalidate revalidations), so that a caller can
/// wait for it: a command-line tool before it exits, a test before its next request.
final class BackgroundTasks: Sendable {
    private struct State {
        var nextID = 0
        var tasks: [Int: Task<Void, Never>] = [:]
    }

    private let state = LockedValue(State())

    /// Runs `work` in a new task, tracked until it ends.
    func run(_ work: @escaping @Sendable () async -> Void) {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let task = Task {
            await work()
            _ = self.state.withLock { $0.tasks.removeValue(forKey: id) }
        }
        // Recorded even when it already ended (its removal then found nothing): waiting for an
        // ended task returns at once, and removes it.
        state.withLock { $0.tasks[id] = task }
    }

    /// Waits until every task started so far, and any they started, has ended.
    func waitForAll() async {
        while let (id, task) = state.withLock({ $0.tasks.first }) {
            await task.value
            _ = state.withLock { $0.tasks.removeValue(forKey: id) }
        }
    }
}
