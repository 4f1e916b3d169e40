import Foundation

extension Cache {
    /// Encodes `value`, stores it on disk under `key`, then keeps the decoded value in memory.
    ///
    /// The disk write is atomic and may evict other entries (see
    /// ``DiskCache/store(_:forKey:timeToLive:pinned:metadata:)-6bikt``). In memory the value expires
    /// with its time-to-live (pinned values do not), and it is not kept at all if its cost is over
    /// the memory tier's per-entry limit; it stays on disk either way (unless the disk's
    /// ``EvictionPolicy/adaptive`` turns away a value larger than its admission window, as
    /// ``DiskCache/store(_:forKey:timeToLive:pinned:metadata:)-6bikt`` describes).
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: Any non-empty string, compared byte for byte.
    ///   - timeToLive: How long the entry stays valid, in both tiers; `nil` (the default) uses
    ///     the disk's ``DiskCache/Configuration/defaultTimeToLive``.
    ///   - pinned: `true` pins the disk entry (never evicted or expired), `false` unpins it,
    ///     `nil` (the default) keeps the state of an existing entry.
    ///   - metadata: Content type, HTTP validators and other strings to keep on disk with the value.
    /// - Throws: The codec's ``StashError`` (code ``StashError/Code/invalidArgument``) when the
    ///   value cannot be encoded; otherwise as
    ///   ``DiskCache/store(_:forKey:timeToLive:pinned:metadata:)-6bikt``, such as
    ///   ``StashError/Code/invalidKey`` for an empty key or ``StashError/Code/tooLarge``. A failed
    ///   store changes neither tier.
    /// - Complexity: Encoding, plus O(*n*) in the encoded length and O(*e* log *N*) for *e*
    ///   entries evicted from disk, plus O(1) amortized in memory.
    /// - Important: Performs blocking file I/O. From Swift concurrency, use the `async` variant.
    public func store(
        _ value: Value, forKey key: String, timeToLive: Duration? = nil, pinned: Bool? = nil,
        metadata: DiskCache.Metadata = DiskCache.Metadata()
    ) throws {
        try DiskCache.validate(key: key)
        let bytes = try encode(value, forKey: key)
        let memoryKey = CacheKey(key)
        let ticket = mutations.begin(memoryKey)
        do {
            forwardMemoryHitsBeforeWriting()
            try disk.store(bytes, forKey: key, timeToLive: timeToLive, pinned: pinned, metadata: metadata)
        } catch {
            _ = mutations.end(ticket)
            throw error
        }
        let diskTimeToLive = pinned == true ? nil : timeToLive ?? disk.configuration.defaultTimeToLive
        memory.setValue(value, forKey: memoryKey, cost: cost?(value), timeToLive: memoryTimeToLive(diskTimeToLive))
        if mutations.end(ticket) {
            // Another store or removal of this key overlapped ours; their disk writes and ours may
            // have landed in the opposite order from their memory writes. Disk decides.
            memory.removeValue(forKey: memoryKey)
        }
    }

    /// Removes the value under `key` from both tiers.
    ///
    /// The memory tier forgets the key even when the disk removal fails.
    ///
    /// - Parameter key: Any non-empty string, compared byte for byte.
    /// - Throws: As ``DiskCache/removeData(forKey:)-9ibq1``: ``StashError`` for an empty key or when
    ///   the index cannot be written.
    /// - Complexity: O(log *N*) on disk, O(1) in memory.
    /// - Important: Performs blocking file I/O. From Swift concurrency, use the `async` variant.
    public func removeValue(forKey key: String) throws {
        try DiskCache.validate(key: key)
        let memoryKey = CacheKey(key)
        let ticket = mutations.begin(memoryKey)
        defer {
            memory.removeValue(forKey: memoryKey)
            _ = mutations.end(ticket)
        }
        try disk.removeData(forKey: key)
    }

    /// Removes every value from both tiers, pinned disk entries included.
    ///
    /// The memory tier is emptied even when the disk cannot be.
    ///
    /// - Throws: As ``DiskCache/removeAll()-1qaa``.
    /// - Complexity: O(*N*) for *N* entries on disk, plus O(*m*) for *m* values in memory.
    /// - Important: Performs blocking file I/O. From Swift concurrency, use the `async` variant.
    public func removeAll() throws {
        let ticket = mutations.beginAll()
        defer {
            memory.removeAll()
            _ = mutations.end(ticket)
        }
        try disk.removeAll()
    }

    // MARK: - Internals

    /// The codec's bytes for `value`, with any error as a ``StashError``.
    func encode(_ value: Value, forKey key: String) throws -> Data {
        do {
            return try codec.encode(value)
        } catch let error as StashError {
            throw error
        } catch {
            throw StashError(
                .invalidArgument,
                "Cannot encode the \(Value.self) to store under '\(key)': the codec \(type(of: codec)) failed.",
                cause: error)
        }
    }

    /// How long a value stays in memory, given how long it stays on disk (`nil`: until evicted):
    /// never longer than on disk, nor than the memory tier's own default.
    func memoryTimeToLive(_ diskTimeToLive: Duration?) -> Duration? {
        guard let diskTimeToLive else { return nil }
        return memory.defaultTimeToLive.map { min($0, diskTimeToLive) } ?? diskTimeToLive
    }
}
