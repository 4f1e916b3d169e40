extension MemoryCache {
    /// A key with its hash value, computed once per operation.
    ///
    /// The hash picks the shard (its top bits) and the key's bucket in the shard's
    /// ``SlotIndex`` (its low 32 bits, the tag), so the hasher runs over the key once. The
    /// adaptive policy's fingerprint and S3-FIFO's ghosts come from it too.
    @usableFromInline
    struct HashedKey: Equatable {
        @usableFromInline let key: Key
        @usableFromInline let hash: Int

        @inlinable
        init(_ key: Key) {
            self.key = key
            self.hash = key.hashValue
        }

        @inlinable
        static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
            lhs.hash == rhs.hash && lhs.key == rhs.key
        }
    }
}
