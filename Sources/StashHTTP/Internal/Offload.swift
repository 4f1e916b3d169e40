import Foundation

/// Where blocking disk-cache calls without an `async` twin run, so that they never block a
/// Swift concurrency thread.
private let blockingQueue = DispatchQueue(label: "stash.http.blocking-io", qos: .userInitiated, attributes: .concurrent)

/// Runs `body` on a dispatch queue and returns its result.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        blockingQueue.async { continuation.resume(with: Result { try body() }) }
    }
}
