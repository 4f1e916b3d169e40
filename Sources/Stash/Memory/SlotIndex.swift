/// A shard's index from a key's hash to the slot that holds the entry: an open-addressing table
/// of 8-byte buckets with linear probing and backward-shift deletion (no tombstones).
///
/// Each bucket packs 32 bits of the key's hash value (its *tag*) with the slot, so that a lookup
/// reads one cache line of buckets for most keys and compares tags before it touches an entry:
/// a `[HashedKey: Int]` dictionary read its bitmap, its keys and its values, three lines. The
/// caller compares the key of a candidate slot, so two keys with the same tag are told apart.
/// The table never moves an entry of the storage: only buckets move, and they carry their slot.
///
/// The tag is the low 32 bits of the key's `hashValue` (the output of the seeded `Hasher`; a
/// ``MemoryCache`` picks the shard with the top bits), and the bucket's home is the tag's low
/// bits, so growing the table needs no entry and no rehash of a key. It grows to keep at most
/// three quarters of the buckets occupied and never shrinks (a shard's ``MemoryCache/removeAll()``
/// replaces it).
@usableFromInline
struct SlotIndex {
    /// 0 for an empty bucket, else `tag << 32 | (slot + 1)`.
    @usableFromInline var buckets: [UInt64] = []
    /// The number of buckets less one (a power of two less one), or -1 while there are none.
    @usableFromInline var mask = -1
    /// How many keys the index holds.
    @usableFromInline var count = 0

    @inlinable
    init() {}

    /// The most slots a shard can have: a slot is stored in 32 bits here and in its links.
    @inlinable static var slotLimit: Int { Int(Int32.max) - 1 }

    /// The tag of a key whose hash value is `hash`.
    @inlinable
    static func tag(_ hash: Int) -> UInt64 { UInt64(UInt32(truncatingIfNeeded: hash)) }

    /// The bucket a tag starts probing from.
    @inlinable
    func home(_ tag: UInt64) -> Int { Int(truncatingIfNeeded: tag) & mask }

    /// The slot of the key with tag `tag` for which `isMatch` (given a candidate slot) is true,
    /// or `nil` if there is none.
    ///
    /// - Complexity: O(1) expected: at three quarters' load, 2.5 buckets on average for a key
    ///   that is present.
    @inlinable
    func slot(tag: UInt64, where isMatch: (Int) -> Bool) -> Int? {
        guard mask >= 0 else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            var position = home(tag)
            while true {
                let bucket = buckets[position]
                if bucket == 0 { return nil }
                if bucket >> 32 == tag {
                    let slot = Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
                    if isMatch(slot) { return slot }
                }
                position = (position + 1) & mask
            }
        }
    }

    /// Adds a key that is not in the index, with its slot, growing the table first if it would
    /// be more than three quarters full.
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func insert(tag: UInt64, slot: Int) {
        precondition(slot < Self.slotLimit, "MemoryCache: a shard holds at most \(Self.slotLimit) entries.")
        if (count + 1) * 4 > (mask + 1) * 3 { grow() }
        Self.place(tag << 32 | UInt64(slot + 1), in: &buckets, mask: mask)
        count += 1
    }

    /// Removes the key with tag `tag` that is in `slot`.
    ///
    /// The buckets after it that would be unreachable across the gap move back into it
    /// (backward-shift deletion), so a lookup still stops at the first empty bucket.
    ///
    /// - Complexity: O(1) expected.
    @inlinable
    mutating func remove(tag: UInt64, slot: Int) {
        let wanted = tag << 32 | UInt64(slot + 1)
        let mask = mask
        let home = home(tag)
        buckets.withUnsafeMutableBufferPointer { buckets in
            var hole = home
            while buckets[hole] != wanted {
                precondition(buckets[hole] != 0, "MemoryCache: slot \(slot) is missing from its shard's index")
                hole = (hole + 1) & mask
            }
            var next = (hole + 1) & mask
            while buckets[next] != 0 {
                let nextHome = Int(truncatingIfNeeded: buckets[next] >> 32) & mask
                // The bucket at `next` may fill the hole unless its home lies after the hole
                // (cyclically, in hole+1...next): then a lookup for it never passes the hole.
                if (next &- nextHome) & mask >= (next &- hole) & mask {
                    buckets[hole] = buckets[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            buckets[hole] = 0
        }
        count -= 1
    }

    /// Doubles the table (16 buckets to start with) and places every bucket again.
    @usableFromInline
    mutating func grow() {
        let capacity = max(16, 2 * (mask + 1))
        var grown = [UInt64](repeating: 0, count: capacity)
        for bucket in buckets where bucket != 0 {
            Self.place(bucket, in: &grown, mask: capacity - 1)
        }
        buckets = grown
        mask = capacity - 1
    }

    /// Puts a bucket in the first empty place from its home.
    @inlinable
    static func place(_ bucket: UInt64, in buckets: inout [UInt64], mask: Int) {
        buckets.withUnsafeMutableBufferPointer { buckets in
            var position = Int(truncatingIfNeeded: bucket >> 32) & mask
            while buckets[position] != 0 { position = (position + 1) & mask }
            buckets[position] = bucket
        }
    }

    /// Describes the first broken invariant: a count that is not the number of occupied
    /// buckets, a bucket that a lookup from its home would not reach, or a slot held twice.
    ///
    /// Returns `nil` if all hold. For tests; O(capacity).
    func invariantViolation() -> String? {
        let occupied = buckets.filter { $0 != 0 }
        guard occupied.count == count else { return "index holds \(occupied.count) buckets, its count is \(count)" }
        guard count == 0 || (count * 4 <= (mask + 1) * 3) else { return "index is over three quarters full" }
        guard Set(occupied.map { $0 & 0xFFFF_FFFF }).count == count else { return "index holds a slot twice" }
        for (position, bucket) in buckets.enumerated() where bucket != 0 {
            // Every bucket from its home up to it must be occupied, or a lookup stops short.
            var probe = home(bucket >> 32)
            while probe != position {
                if buckets[probe] == 0 { return "bucket \(position) is unreachable from its home" }
                probe = (probe + 1) & mask
            }
        }
        return nil
    }
}
