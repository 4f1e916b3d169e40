import Foundation

extension Cache {
    /// The value stored under `key`, without blocking the caller's executor.
    ///
    /// A memory hit is answered at once; on a miss, the disk read, decoding and promotion run
    /// on the disk tier's I/O queue.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: The value, or `nil` on a miss.
    /// - Throws: As ``value(forKey:)``.
    /// - Complexity: As ``value(forKey:)``.
    @inlinable
    public func value(forKey key: String) async throws -> Value? {
        try Self.validate(key: key)
        let memoryKey = CacheKey(key)
        if let value = memoryHit(memoryKey) { return value }
        return try await readBelowMemory(key: key, memoryKey: memoryKey)?.value
    }

    /// The value stored under `key` and the tier that served it, without blocking the caller's
    /// executor.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: The value and its tier, or `nil` on a miss.
    /// - Throws: As ``valueAndTier(forKey:)``.
    /// - Complexity: As ``valueAndTier(forKey:)``.
    @inlinable
    public func valueAndTier(forKey key: String) async throws -> (value: Value, tier: CacheTier)? {
        try Self.validate(key: key)
        let memoryKey = CacheKey(key)
        if let value = memoryHit(memoryKey) { return (value, .memory) }
        return try await readBelowMemory(key: key, memoryKey: memoryKey)
    }

    /// Whether a value is stored under `key` in either tier, without blocking the caller's
    /// executor.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Returns: `true` if memory holds a live value or the disk a live entry.
    /// - Throws: As ``containsValue(forKey:)``.
    /// - Complexity: As ``containsValue(forKey:)``.
    public func containsValue(forKey key: String) async throws -> Bool {
        try Self.validate(key: key)
        if memory.containsValue(forKey: CacheKey(key)) { return true }
        return try await disk.containsData(forKey: key)
    }

    /// Stores `value` under `key` in both tiers, without blocking the caller's executor.
    ///
    /// Encoding and the disk write run on the disk tier's I/O queue.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Any non-empty string, compared byte for byte.
    ///   - timeToLive: As in ``store(_:forKey:timeToLive:pinned:metadata:)``.
    ///   - pinned: As in ``store(_:forKey:timeToLive:pinned:metadata:)``.
    ///   - metadata: As in ``store(_:forKey:timeToLive:pinned:metadata:)``.
    /// - Throws: As ``store(_:forKey:timeToLive:pinned:metadata:)``.
    /// - Complexity: As ``store(_:forKey:timeToLive:pinned:metadata:)``.
    public func store(
        _ value: Value, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: DiskCache.Metadata = DiskCache.Metadata()
    ) async throws {
        try await disk.offload {
            try self.store(value, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata)
        }
        await shareStore(value, forKey: key, timeToLive: timeToLive, metadata: metadata)
    }

    /// Removes the value under `key` from both tiers, without blocking the caller's executor.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Throws: As ``removeValue(forKey:)``.
    /// - Complexity: As ``removeValue(forKey:)``.
    public func removeValue(forKey key: String) async throws {
        try await disk.offload { try self.removeValue(forKey: key) }
        await shareRemoval(forKey: key)
    }

    /// Removes every value from both tiers, without blocking the caller's executor.
    ///
    /// - Throws: As ``removeAll()``.
    /// - Complexity: As ``removeAll()``.
    public func removeAll() async throws {
        try await disk.offload { try self.removeAll() }
    }

    /// The miss path of an `async` read: ``readFromDisk(key:memoryKey:)`` on the disk tier's
    /// I/O queue.
    @usableFromInline
    func readFromDiskOffloaded(key: String, memoryKey: CacheKey) async throws -> Value? {
        try await disk.offload { try self.readFromDisk(key: key, memoryKey: memoryKey) }
    }
}
