// The storage is `@usableFromInline` and its hot operations `@inlinable`, so that a client's
// `MemoryCache<String, Data>` runs code specialized for its types rather than generic code
// that looks up type metadata on every access.
extension MemoryCache {
    /// A key and its value, as ``Storage/remove(at:)`` hands them back.
    @usableFromInline
    struct Entry {
        @usableFromInline var key: Key
        @usableFromInline var value: Value

        @inlinable
        init(key: Key, value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// An entry's place in the list, its cost and its expiry.
    ///
    /// Kept apart from the key and value, and made of plain integers, so that relinking an
    /// entry on a hit touches no reference-counted field.
    @usableFromInline
    struct Node {
        @usableFromInline var cost: Int
        /// When the entry stops being served, as a time since the cache's epoch (see
        /// ``MemoryCache/clock``), or `nil` if it never expires.
        @usableFromInline var expiry: Duration?
        /// The neighbour towards the front (more recently used), or ``Storage/none``.
        @usableFromInline var previous: Int
        /// The neighbour towards the back (less recently used), or ``Storage/none``.
        @usableFromInline var next: Int

        /// Creates a node that is not linked to any neighbour.
        @inlinable
        init(cost: Int, expiry: Duration?) {
            self.cost = cost
            self.expiry = expiry
            self.previous = Storage.none
            self.next = Storage.none
        }

        @inlinable
        func isExpired(at now: Duration) -> Bool {
            guard let expiry else { return false }
            return now >= expiry
        }
    }

    /// The entries: an intrusive doubly-linked list threaded through contiguous arrays by
    /// index, plus a key-to-slot index.
    ///
    /// Slot `i` is `keys[i]` and `values[i]` (`nil` while the slot is free) and `nodes[i]` (its
    /// links, cost and expiry; stale while the slot is free). Keys and values live in arrays of
    /// their own so that reading a value on a hit copies the value alone. Every operation is
    /// O(1). Freed slots are kept on a free list and reused, so a cache that has reached its
    /// steady size stops allocating.
    @usableFromInline
    struct Storage {
        @inlinable static var none: Int { -1 }

        // Internal rather than private(set) because inlined code in client modules mutates them;
        // only the methods below do.
        @usableFromInline var keys: [Key?] = []
        @usableFromInline var values: [Value?] = []
        @usableFromInline var nodes: [Node] = []
        @usableFromInline var freeSlots: [Int] = []
        @usableFromInline var slots: [Key: Int] = [:]
        /// The front of the list (most recently used under LRU).
        @usableFromInline var head = Storage.none
        /// The back of the list: the next victim under LRU.
        @usableFromInline var tail = Storage.none
        @usableFromInline var totalCost = 0

        @usableFromInline
        init() {}

        @inlinable var count: Int { slots.count }

        @inlinable
        func slot(forKey key: Key) -> Int? { slots[key] }

        /// The value in an occupied slot.
        @inlinable
        func value(at slot: Int) -> Value { values[slot]! }

        /// The key in an occupied slot.
        @inlinable
        func key(at slot: Int) -> Key { keys[slot]! }

        /// Finds the slot of `key`, or claims a free one for it, hashing the key once.
        ///
        /// A claimed slot is in the index but holds nothing yet: the caller must ``fill(_:key:value:cost:expiry:)``
        /// it before anything else touches the storage.
        @inlinable
        mutating func slot(claimingFor key: Key) -> (slot: Int, isClaimed: Bool) {
            let candidate = freeSlots.last ?? nodes.count
            var isClaimed = false
            let slot = Self.claim(&slots[key, default: Storage.none], candidate: candidate, isClaimed: &isClaimed)
            return (slot, isClaimed)
        }

        @inlinable
        static func claim(_ slot: inout Int, candidate: Int, isClaimed: inout Bool) -> Int {
            if slot == Storage.none {
                slot = candidate
                isClaimed = true
            }
            return slot
        }

        /// Stores a new entry, unlinked, in the slot that ``slot(claimingFor:)`` claimed for
        /// `key`; the caller links it where its policy wants it.
        @inlinable
        mutating func fill(_ slot: Int, key: Key, value: Value, cost: Int, expiry: Duration?) {
            let node = Node(cost: cost, expiry: expiry)
            if slot < nodes.count {
                // A claimed slot below the end is the last free one.
                freeSlots.removeLast()
                keys[slot] = key
                values[slot] = value
                nodes[slot] = node
            } else {
                keys.append(key)
                values.append(value)
                nodes.append(node)
            }
            totalCost += cost
        }

        /// Unlinks and frees an entry, returning it so that the caller can release its value
        /// outside the lock or hand it to the eviction callback.
        @inlinable
        mutating func remove(at slot: Int) -> Entry {
            unlink(slot)
            let entry = Entry(key: keys[slot].take()!, value: values[slot].take()!)
            freeSlots.append(slot)
            slots[entry.key] = nil
            totalCost -= nodes[slot].cost
            return entry
        }

        /// Replaces an entry's value, cost and expiry in place, returning the old value.
        @inlinable
        mutating func replace(at slot: Int, value: Value, cost: Int, expiry: Duration?) -> Value {
            totalCost += cost - nodes[slot].cost
            nodes[slot].cost = cost
            nodes[slot].expiry = expiry
            var old = value
            swap(&old, &values[slot]!)
            return old
        }

        @inlinable
        mutating func linkAtFront(_ slot: Int) {
            nodes[slot].previous = Storage.none
            nodes[slot].next = head
            if head != Storage.none { nodes[head].previous = slot }
            head = slot
            if tail == Storage.none { tail = slot }
        }

        @inlinable
        mutating func unlink(_ slot: Int) {
            let previous = nodes[slot].previous
            let next = nodes[slot].next
            if previous != Storage.none { nodes[previous].next = next } else { head = next }
            if next != Storage.none { nodes[next].previous = previous } else { tail = previous }
            nodes[slot].previous = Storage.none
            nodes[slot].next = Storage.none
        }

        @inlinable
        mutating func moveToFront(_ slot: Int) {
            guard slot != head else { return }
            unlink(slot)
            linkAtFront(slot)
        }

        /// The entries from the back of the list to the front: the order in which they would
        /// be evicted under LRU.
        func slotsFromBack() -> some Sequence<Int> {
            sequence(state: tail) { slot in
                guard slot != Storage.none else { return nil }
                defer { slot = nodes[slot].previous }
                return slot
            }
        }

        /// Describes the first broken invariant of the list, the index or the running total.
        ///
        /// Returns `nil` if all hold. For tests; O(n).
        func invariantViolation() -> String? {
            guard keys.count == nodes.count, values.count == nodes.count else {
                return "\(keys.count) keys and \(values.count) values for \(nodes.count) nodes"
            }
            var slot = head
            var previous = Storage.none
            var visited = 0
            var cost = 0
            while slot != Storage.none {
                guard visited < count, let key = keys[slot], values[slot] != nil else {
                    return "list is longer than the index or cyclic"
                }
                let node = nodes[slot]
                guard node.previous == previous else { return "slot \(slot) links back to \(node.previous)" }
                guard slots[key] == slot else { return "index maps \(key) elsewhere than slot \(slot)" }
                visited += 1
                cost += node.cost
                previous = slot
                slot = node.next
            }
            if previous != tail { return "tail is \(tail), the walk ended at \(previous)" }
            if visited != count { return "list has \(visited) nodes, the index \(count)" }
            if cost != totalCost { return "nodes cost \(cost), totalCost is \(totalCost)" }
            if visited + freeSlots.count != nodes.count { return "free list does not cover the empty slots" }
            return nil
        }
    }
}
