import Foundation

/// A load started by ``ResourceLoader/task(for:delivery:)``: change its priority while it
/// waits, follow its progress, cancel it, or await its response.
///
/// ```swift
/// let task = loader.task(for: ResourceRequest(videoURL), delivery: .file)
/// task.priority = .high
/// for await progress in task.progress { print(progress.fractionCompleted ?? 0) }
/// let file = try await task.response.fileURL
/// ```
public final class ResourceTask: Sendable {
    /// The request being loaded.
    public let request: ResourceRequest
    /// Progress of the transfer (bytes received and expected), ending when the task ends.
    ///
    /// Keeps only the latest value for a slow reader. A cache hit reports its size once.
    /// Iterate it from one place only.
    public let progress: AsyncStream<TransferProgress>

    private let loader: ResourceLoader
    private let waiter: Waiter
    private let key: String
    private let task: Task<ResourceResponse, any Error>

    init(loader: ResourceLoader, request: ResourceRequest, delivery: ResourceLoader.Delivery) {
        let (progress, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let waiter = Waiter(priority: request.priority, progress: continuation)
        self.request = request
        self.progress = progress
        self.loader = loader
        self.waiter = waiter
        self.key = loader.transferKey(request, key: loader.cacheKey(for: request))
        self.task = Task {
            defer { continuation.finish() }
            return try await loader.load(request, delivery: delivery, waiter: waiter)
        }
    }

    /// The task's priority.
    ///
    /// Raising it while the transfer waits for a slot moves it ahead of lower-priority transfers; a transfer
    /// shared with other requests runs at the highest priority among them.
    public var priority: ResourceLoader.Priority {
        get { waiter.priority }
        set {
            waiter.priority = newValue
            loader.coordinator.priorityChanged(waiter, key: key)
        }
    }

    /// The response, once loaded.
    ///
    /// Cancelling the awaiting task cancels this one.
    ///
    /// - Throws: As ``ResourceLoader/response(for:delivery:)``.
    public var response: ResourceResponse {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Stops waiting for the response: the request fails with
    /// `StashError.Code.cancelled`, and the transfer stops unless other requests still
    /// wait for it.
    public func cancel() {
        task.cancel()
    }
}
