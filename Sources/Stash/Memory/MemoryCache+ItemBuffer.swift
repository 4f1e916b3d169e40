extension MemoryCache {
    /// The memory that holds a shard's items, one per slot, with a flag per slot that says
    /// whether it holds one, and the buffer of hits that LRU and the adaptive policy replay; it
    /// frees the items that are left when the storage goes away.
    ///
    /// A plain allocation rather than an `[Item?]`: Swift copies a whole optional element
    /// (retaining its key and value) to read one field of it, so every read of an item's key or
    /// mark cost a retain and a release of the value and a 64-byte copy. Through a typed
    /// pointer a read of `items[slot].key` or a write of `items[slot].mark` touches that field
    /// alone. ``Storage`` keeps copies of the pointers and writes through them, so that neither
    /// a hit nor an insertion touches this object (whose stored properties Swift would check
    /// for exclusive access at run time); only growing does.
    @usableFromInline
    final class ItemBuffer {
        /// Where slot 0's item is.
        @usableFromInline private(set) var items: UnsafeMutablePointer<Item>
        /// Whether each slot holds an item.
        @usableFromInline private(set) var occupied: UnsafeMutablePointer<Bool>
        /// How many slots the allocation has.
        @usableFromInline private(set) var capacity = 0
        /// Room for ``State/pendingHitLimit`` buffered hits' slots.
        @usableFromInline let pendingSlots: UnsafeMutablePointer<Int>
        /// Room for as many buffered hits' fingerprints (the adaptive policy's).
        @usableFromInline let pendingFingerprints: UnsafeMutablePointer<UInt32>

        @usableFromInline
        init() {
            items = .allocate(capacity: 0)
            occupied = .allocate(capacity: 0)
            pendingSlots = .allocate(capacity: State.pendingHitLimit)
            pendingFingerprints = .allocate(capacity: State.pendingHitLimit)
        }

        deinit {
            for slot in 0..<capacity where occupied[slot] { (items + slot).deinitialize(count: 1) }
            items.deallocate()
            occupied.deallocate()
            pendingSlots.deallocate()
            pendingFingerprints.deallocate()
        }

        /// Moves the items to an allocation of at least `count` slots (twice the capacity, 16 at
        /// least); the caller must take the new pointers.
        @usableFromInline
        func grow(toHold count: Int) {
            let grownCapacity = max(16, 2 * capacity, count)
            let grownItems = UnsafeMutablePointer<Item>.allocate(capacity: grownCapacity)
            let grownOccupied = UnsafeMutablePointer<Bool>.allocate(capacity: grownCapacity)
            grownOccupied.initialize(repeating: false, count: grownCapacity)
            for slot in 0..<capacity where occupied[slot] {
                (grownItems + slot).moveInitialize(from: items + slot, count: 1)
                grownOccupied[slot] = true
            }
            items.deallocate()
            occupied.deallocate()
            items = grownItems
            occupied = grownOccupied
            capacity = grownCapacity
        }
    }
}

extension MemoryCache.Storage {
    /// Whether `slot` holds an item.
    @inlinable
    func holdsItem(at slot: Int) -> Bool { slot >= 0 && slot < itemCapacity && occupied[slot] }

    /// Puts an item in a free slot, growing the buffer first if the slot is past its end.
    @inlinable
    mutating func initializeItem(_ slot: Int, to item: MemoryCache.Item) {
        precondition(slot >= 0 && !holdsItem(at: slot), "MemoryCache: slot \(slot) is already occupied")
        if slot >= itemCapacity {
            itemBuffer.grow(toHold: slot + 1)
            items = itemBuffer.items
            occupied = itemBuffer.occupied
            itemCapacity = itemBuffer.capacity
        }
        (items + slot).initialize(to: item)
        occupied[slot] = true
    }

    /// Takes the item out of `slot`, which becomes free.
    @inlinable
    func takeItem(_ slot: Int) -> MemoryCache.Item {
        precondition(holdsItem(at: slot), "MemoryCache: slot \(slot) holds no item")
        occupied[slot] = false
        return (items + slot).move()
    }
}
