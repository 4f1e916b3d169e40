import Foundation

/// Where the `async` variants run their blocking file and database I/O, so that they never
/// block a Swift concurrency thread.
private let diskQueue = DispatchQueue(label: "stash.disk-cache.io", qos: .userInitiated, attributes: .concurrent)

extension DiskCache {
    func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            diskQueue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Stores `data` under `key` without blocking the caller's executor.
    ///
    /// - Throws: As ``store(_:forKey:timeToLive:pinned:metadata:)``.
    /// - Complexity: As ``store(_:forKey:timeToLive:pinned:metadata:)``.
    public func store(
        _ data: Data, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: Metadata = Metadata()
    ) async throws {
        try await offload {
            try self.store(data, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata)
        }
    }

    /// ``store(_:forKey:timeToLive:pinned:metadata:mayBeTurnedAway:)`` without blocking the
    /// caller's executor.
    package func store(
        _ data: Data, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: Metadata = Metadata(), mayBeTurnedAway: Bool
    ) async throws {
        try await offload {
            try self.store(
                data, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata,
                mayBeTurnedAway: mayBeTurnedAway)
        }
    }

    /// ``store(fileAt:forKey:moving:timeToLive:pinned:metadata:mayBeTurnedAway:)`` without
    /// blocking the caller's executor.
    package func store(
        fileAt fileURL: URL, forKey key: String, moving: Bool = false, timeToLive: Duration? = nil,
        pinned: Bool? = nil, metadata: Metadata = Metadata(), mayBeTurnedAway: Bool
    ) async throws {
        try await offload {
            try self.store(
                fileAt: fileURL, forKey: key, moving: moving, timeToLive: timeToLive, pinned: pinned,
                metadata: metadata, mayBeTurnedAway: mayBeTurnedAway)
        }
    }

    /// Stores the file at `fileURL` under `key` without blocking the caller's executor.
    ///
    /// - Throws: As ``store(fileAt:forKey:moving:timeToLive:pinned:metadata:)``.
    /// - Complexity: O(*n*) in the file's length.
    public func store(
        fileAt fileURL: URL, forKey key: String, moving: Bool = false, timeToLive: Duration? = nil,
        pinned: Bool? = nil, metadata: Metadata = Metadata()
    ) async throws {
        try await offload {
            try self.store(
                fileAt: fileURL, forKey: key, moving: moving, timeToLive: timeToLive, pinned: pinned,
                metadata: metadata)
        }
    }

    /// The value stored under `key`, read without blocking the caller's executor.
    ///
    /// - Throws: As ``data(forKey:)``.
    /// - Complexity: As ``data(forKey:)``.
    public func data(forKey key: String) async throws -> Data? {
        try await offload { try self.data(forKey: key) }
    }

    /// A file URL for the value under `key`, without blocking the caller's executor.
    ///
    /// - Throws: As ``fileURL(forKey:)``.
    /// - Complexity: As ``fileURL(forKey:)``.
    public func fileURL(forKey key: String) async throws -> URL? {
        try await offload { try self.fileURL(forKey: key) }
    }

    /// Whether a live value is stored under `key`, without blocking the caller's executor.
    ///
    /// - Throws: As ``containsData(forKey:)``.
    /// - Complexity: O(log *N*).
    public func containsData(forKey key: String) async throws -> Bool {
        try await offload { try self.containsData(forKey: key) }
    }

    /// The attributes of the entry under `key`, without blocking the caller's executor.
    ///
    /// - Throws: As ``attributes(forKey:)``.
    /// - Complexity: O(log *N*).
    public func attributes(forKey key: String) async throws -> Attributes? {
        try await offload { try self.attributes(forKey: key) }
    }

    /// Removes the entry under `key`, without blocking the caller's executor.
    ///
    /// - Throws: As ``removeData(forKey:)``.
    /// - Complexity: O(log *N*).
    public func removeData(forKey key: String) async throws {
        try await offload { try self.removeData(forKey: key) }
    }

    /// Removes every entry, without blocking the caller's executor.
    ///
    /// - Throws: As ``removeAll()``.
    /// - Complexity: O(*N*).
    public func removeAll() async throws {
        try await offload { try self.removeAll() }
    }

    /// Evicts down to `size` bytes, without blocking the caller's executor.
    ///
    /// - Throws: As ``trim(toSize:)``.
    /// - Complexity: O(*e* log *N*) for *e* evicted entries.
    public func trim(toSize size: ByteCount) async throws {
        try await offload { try self.trim(toSize: size) }
    }

    /// Verifies (and optionally repairs) the cache, without blocking the caller's executor.
    ///
    /// - Throws: As ``verify(repair:)``.
    /// - Complexity: O(*N* + *B*).
    public func verify(repair: Bool = false) async throws -> VerificationReport {
        try await offload { try self.verify(repair: repair) }
    }
}
