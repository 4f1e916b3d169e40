extension MemoryCache {
    /// A key with its hash value, computed once per operation.
    ///
    /// The hash picks the shard and then serves the shard's index: the index's own hashing
    /// (``_rawHashValue(seed:)``) only mixes it with the index's seed instead of running the
    /// hasher over the key a second time. The adaptive policy's fingerprint and S3-FIFO's ghosts
    /// come from it too.
    @usableFromInline
    struct HashedKey: Hashable {
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

        @inlinable
        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }

        /// The hash value mixed with `seed` by a multiply-xorshift, which costs a few cycles
        /// where `Hasher` costs tens of nanoseconds: the hash value already is the output of
        /// the seeded `Hasher` over the key, so flooding the index is as hard as before.
        @inlinable
        func _rawHashValue(seed: Int) -> Int {
            var mixed = UInt64(bitPattern: Int64(hash ^ seed))
            mixed ^= mixed &>> 32
            mixed &*= 0xD6E8_FEB8_6659_FD93
            mixed ^= mixed &>> 32
            return Int(Int64(bitPattern: mixed))
        }
    }
}
