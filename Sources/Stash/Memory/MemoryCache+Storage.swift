extension MemoryCache {
    /// One cached entry, stored by value in ``Storage/nodes`` and linked to its neighbours by
    /// index, so that an entry costs no allocation of its own.
    struct Node {
        var key: Key
        var value: Value
        var cost: Int
        /// When the entry stops being served, or `nil` if it never expires.
        var expiry: ContinuousClock.Instant?
        /// The neighbour towards the front (more recently used), or ``Storage/none``.
        var previous: Int
        /// The neighbour towards the back (less recently used), or ``Storage/none``.
        var next: Int

        func isExpired(at now: ContinuousClock.Instant) -> Bool {
            guard let expiry else { return false }
            return now >= expiry
        }
    }

    /// The entries: an intrusive doubly-linked list threaded through a contiguous array of
    /// nodes, plus a key-to-slot index.
    ///
    /// Every operation is O(1). Freed slots are kept on a free list and reused, so a cache that
    /// has reached its steady size stops allocating.
    struct Storage {
        static var none: Int { -1 }

        private(set) var nodes: [Node?] = []
        private var freeSlots: [Int] = []
        private(set) var slots: [Key: Int] = [:]
        /// The front of the list (most recently used under LRU).
        private(set) var head = Storage.none
        /// The back of the list: the next victim under LRU.
        private(set) var tail = Storage.none
        private(set) var totalCost = 0

        var count: Int { slots.count }

        func slot(forKey key: Key) -> Int? { slots[key] }

        subscript(slot: Int) -> Node {
            _read { yield nodes[slot]! }
            _modify { yield &nodes[slot]! }
        }

        /// Stores a new entry, unlinked; the caller links it where its policy wants it.
        mutating func allocate(
            key: Key, value: Value, cost: Int, expiry: ContinuousClock.Instant?
        ) -> Int {
            let node = Node(
                key: key, value: value, cost: cost, expiry: expiry, previous: Storage.none, next: Storage.none)
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
                nodes[slot] = node
            } else {
                slot = nodes.count
                nodes.append(node)
            }
            slots[key] = slot
            totalCost += cost
            return slot
        }

        /// Unlinks and frees an entry, returning it so that the caller can release its value
        /// outside the lock or hand it to the eviction callback.
        mutating func remove(at slot: Int) -> Node {
            unlink(slot)
            let node = nodes[slot].take()!
            freeSlots.append(slot)
            slots[node.key] = nil
            totalCost -= node.cost
            return node
        }

        /// Replaces an entry's value, cost and expiry in place, returning the old value.
        mutating func replace(
            at slot: Int, value: Value, cost: Int, expiry: ContinuousClock.Instant?
        ) -> Value {
            totalCost += cost - self[slot].cost
            self[slot].cost = cost
            self[slot].expiry = expiry
            var old = value
            swap(&old, &self[slot].value)
            return old
        }

        mutating func linkAtFront(_ slot: Int) {
            self[slot].previous = Storage.none
            self[slot].next = head
            if head != Storage.none { self[head].previous = slot }
            head = slot
            if tail == Storage.none { tail = slot }
        }

        mutating func unlink(_ slot: Int) {
            let previous = self[slot].previous
            let next = self[slot].next
            if previous != Storage.none { self[previous].next = next } else { head = next }
            if next != Storage.none { self[next].previous = previous } else { tail = previous }
            self[slot].previous = Storage.none
            self[slot].next = Storage.none
        }

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
                defer { slot = nodes[slot]!.previous }
                return slot
            }
        }

        /// Describes the first broken invariant of the list, the index or the running total.
        ///
        /// Returns `nil` if all hold. For tests; O(n).
        func invariantViolation() -> String? {
            var slot = head
            var previous = Storage.none
            var visited = 0
            var cost = 0
            while slot != Storage.none {
                guard visited < count, let node = nodes[slot] else { return "list is longer than the index or cyclic" }
                guard node.previous == previous else { return "slot \(slot) links back to \(node.previous)" }
                guard slots[node.key] == slot else { return "index maps \(node.key) elsewhere than slot \(slot)" }
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
