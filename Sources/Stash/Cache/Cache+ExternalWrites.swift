import Foundation

extension Cache {
    /// Keeps in memory a value decoded from bytes that other code stored under `key` directly on
    /// ``disk``, such as a loader that streams downloads into the disk tier.
    ///
    /// Call it after the bytes are on disk, with the value they decode to. It takes part in the
    /// cache's overlap detection like a store: a store, removal or promotion of `key` that
    /// overlaps it makes the memory tier drop the key, so memory never keeps a value that differs
    /// from disk's. Nothing is written to disk.
    ///
    /// - Parameters:
    ///   - value: The value decoded from the bytes on disk.
    ///   - key: Any non-empty string, compared byte for byte.
    ///   - timeToLive: How long the disk entry lives from now; memory keeps the value no longer
    ///     (nor longer than the memory tier's own default). Defaults to `nil`: until evicted.
    /// - Complexity: O(*k*) in the key's length, plus O(1) amortized in memory.
    public func promote(_ value: Value, forKey key: String, timeToLive: Duration? = nil) {
        guard !key.isEmpty else { return }
        let memoryKey = CacheKey(key)
        let ticket = mutations.begin(memoryKey)
        memory.setValue(value, forKey: memoryKey, cost: cost?(value), timeToLive: memoryTimeToLive(timeToLive))
        if mutations.end(ticket) {
            // Another mutation of the key overlapped this one and may have replaced the bytes
            // this value was decoded from. Disk decides.
            memory.removeValue(forKey: memoryKey)
        }
    }

    /// Drops the memory tier's value for `key`, leaving disk untouched, after other code replaced
    /// or removed the disk entry directly.
    ///
    /// A promotion of `key` in progress (a read that found the old bytes on disk) gives way, so
    /// the old value does not come back into memory.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Complexity: O(*k*) in the key's length, plus O(1) in memory.
    public func removeFromMemory(forKey key: String) {
        guard !key.isEmpty else { return }
        let memoryKey = CacheKey(key)
        let ticket = mutations.begin(memoryKey)
        memory.removeValue(forKey: memoryKey)
        _ = mutations.end(ticket)
    }
}
