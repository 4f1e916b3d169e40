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

    /// An entry's cost, its expiry and the policy's bits that a hit does not touch.
    ///
    /// Kept apart from the item and the links, and made of plain values: the policies read it
    /// when they evict, and a hit reads it only for an entry that has an expiry.
    @usableFromInline
    struct Node {
        @usableFromInline var cost: Int
        /// When the entry stops being served, as a time since the cache's epoch (see
        /// ``MemoryCache/clock``), or `nil` if it never expires.
        @usableFromInline var expiry: Duration?
        /// Whether the entry is in S3-FIFO's small queue rather than in ``Storage/main``.
        ///
        /// Declared after `expiry`, like `fingerprint`, so that both fit in the padding that
        /// follows the optional `Duration` and the node stays 32 bytes.
        @usableFromInline var isInSmallQueue: Bool
        /// The adaptive policy's fingerprint of the key: its hash value, truncated.
        ///
        /// Computed once when the entry is stored, so that a hit does not hash the key again; 0
        /// under the other policies. It fills the rest of the padding after `isInSmallQueue`.
        @usableFromInline var fingerprint: UInt32

        /// Creates a node.
        @inlinable
        init(cost: Int, expiry: Duration?) {
            self.cost = cost
            self.expiry = expiry
            self.isInSmallQueue = false
            self.fingerprint = 0
        }

        @inlinable
        func isExpired(at now: Duration) -> Bool {
            guard let expiry else { return false }
            return now >= expiry
        }
    }

    /// A slot's neighbours in its queue, kept in ``Storage/links``.
    ///
    /// Apart from the nodes and in 32 bits each: 8 bytes a slot, so that the links of a cache of
    /// 100 000 entries (800 KB) stay in a core's second-level cache, and LRU's move of a hit
    /// entry to the front, which touches three entries' links, rarely goes further.
    ///
    /// Its layout (previous, then next, 8 bytes) is what ``replayMovesToFront(ofLinks:_:_:head:tail:)``
    /// relies on.
    @usableFromInline
    struct Link {
        @usableFromInline var storedPrevious: Int32 = -1
        @usableFromInline var storedNext: Int32 = -1

        @inlinable
        init() {}

        /// The neighbour towards the head (newer, or more recently used), or ``Storage/none``.
        @inlinable var previous: Int {
            get { Int(storedPrevious) }
            set { storedPrevious = Int32(truncatingIfNeeded: newValue) }
        }

        /// The neighbour towards the tail (older, or less recently used), or ``Storage/none``.
        @inlinable var next: Int {
            get { Int(storedNext) }
            set { storedNext = Int32(truncatingIfNeeded: newValue) }
        }
    }

    /// A slot's key, value and policy bits, as ``Storage/items`` holds them.
    ///
    /// Together, so that a hit reads one entry: it compares the key, copies the value and sets
    /// the bit or counter in the same cache line (for small keys and values).
    @usableFromInline
    struct Item {
        @usableFromInline var key: HashedKey
        @usableFromInline var value: Value
        @usableFromInline var mark = Mark()

        @inlinable
        init(key: HashedKey, value: Value) {
            self.key = key
            self.value = value
        }
    }

    /// A slot's policy bits, kept in its ``Item``.
    @usableFromInline
    struct Mark {
        /// SIEVE's visited bit (0 or 1), or the read counter (0 to 3) of S3-FIFO and of the
        /// adaptive policy's CLOCK; 0 under LRU.
        @usableFromInline var frequency: UInt8 = 0
        /// Hits on the entry that a ``Cache`` has not yet handed to its disk tier (saturating);
        /// see ``MemoryCache/value(forKey:reportingHit:)``.
        @usableFromInline var unreportedHits: UInt8 = 0
        /// A copy of ``Node/isInSmallQueue``, for the adaptive policy's replay of hits.
        @usableFromInline var isInSmallQueue = false

        @inlinable
        init() {}
    }

    /// The ends of one doubly-linked list threaded through ``Storage/links``, and how many
    /// entries it holds at what total cost.
    @usableFromInline
    struct Queue {
        /// The newest (or most recently used) entry, or ``Storage/none``.
        @usableFromInline var head = Storage.none
        /// The oldest (or least recently used) entry, or ``Storage/none``.
        @usableFromInline var tail = Storage.none
        @usableFromInline var count = 0
        @usableFromInline var cost = 0

        @inlinable
        init() {}
    }

    /// The entries: intrusive doubly-linked lists threaded through contiguous arrays by index,
    /// plus a key-to-slot index and the policies' own state.
    ///
    /// Slot `i` is `items[i]` (its key, value and policy bits; uninitialized while the slot is free) and
    /// `nodes[i]` and `links[i]` (its cost and expiry, its neighbours; stale while the slot is
    /// free). A hit reads the index's bucket and the item and nothing else. Every
    /// operation is O(1). Freed slots are kept on a free list and reused, so a cache that has
    /// reached its steady size stops allocating.
    ///
    /// Every entry is in ``main`` except those in S3-FIFO's ``small`` queue. The policies'
    /// state lives here too, rather than beside the storage, so that emptying the cache by
    /// swapping in a new storage resets it along with the entries.
    @usableFromInline
    struct Storage {
        @inlinable static var none: Int { -1 }

        // Internal rather than private(set) because inlined code in client modules mutates them;
        // only the methods below and the policy functions in MemoryCache+Eviction.swift do.
        // What a hit reads comes first, so that it shares the cache lines after the shard's lock.
        @usableFromInline var index = SlotIndex()
        /// The items, slot by slot.
        ///
        /// ``ItemBuffer/items`` of ``itemBuffer``, read and written without going through the
        /// object. Only occupied slots may be read.
        @usableFromInline var items: UnsafeMutablePointer<Item>
        /// How many stored entries have an expiry: while none has, a hit does not read its node.
        @usableFromInline var expiringCount = 0
        /// Slots hit since the policy last caught up (LRU and adaptive only), oldest first, and
        /// the adaptive policy's fingerprints of their keys: ``ItemBuffer/pendingSlots`` and
        /// ``ItemBuffer/pendingFingerprints``.
        ///
        /// See ``MemoryCache/State/recordHit(_:hash:)``. Only the first
        /// ``MemoryCache/State/pendingCount`` are meaningful.
        @usableFromInline let pendingSlots: UnsafeMutablePointer<Int>
        @usableFromInline let pendingFingerprints: UnsafeMutablePointer<UInt32>
        @usableFromInline var nodes: [Node] = []
        @usableFromInline var links: [Link] = []
        @usableFromInline var freeSlots: [Int] = []
        /// Whether each slot holds an item: ``ItemBuffer/occupied``.
        @usableFromInline var occupied: UnsafeMutablePointer<Bool>
        /// How many slots ``items`` and ``occupied`` have room for.
        @usableFromInline var itemCapacity: Int
        /// Owns ``items``.
        @usableFromInline let itemBuffer: ItemBuffer
        /// Most recently used first under LRU, newest first under SIEVE; S3-FIFO's main queue.
        @usableFromInline var main = Queue()
        /// S3-FIFO's small queue, newest first; empty under the other policies.
        @usableFromInline var small = Queue()
        /// The entry SIEVE's hand examines next, or ``none`` to start at the tail of ``main``.
        ///
        /// Always ``none`` or an entry of ``main``: removing the entry it points at moves it on.
        @usableFromInline var hand = Storage.none
        /// S3-FIFO's ghost queue; empty under the other policies.
        @usableFromInline var ghosts = GhostQueue()
        /// The adaptive policy's sketch and window climber; unused by the other policies.
        @usableFromInline var admission = Admission()

        @usableFromInline
        init() {
            itemBuffer = ItemBuffer()
            items = itemBuffer.items
            occupied = itemBuffer.occupied
            itemCapacity = itemBuffer.capacity
            pendingSlots = itemBuffer.pendingSlots
            pendingFingerprints = itemBuffer.pendingFingerprints
        }

        @inlinable var count: Int { index.count }

        @inlinable var totalCost: Int { main.cost + small.cost }

        /// The slot of `key`, or `nil` if it is not stored.
        @inlinable
        func slot(forKey key: HashedKey) -> Int? {
            index.slot(tag: SlotIndex.tag(key.hash)) { items[$0].key == key }
        }

        /// The policy bits of an occupied slot.
        @inlinable
        subscript(mark slot: Int) -> Mark {
            get { items[slot].mark }
            nonmutating set { items[slot].mark = newValue }
        }

        /// The value in an occupied slot.
        @inlinable
        func value(at slot: Int) -> Value { items[slot].value }

        /// The key in an occupied slot.
        @inlinable
        func key(at slot: Int) -> Key { items[slot].key.key }

        /// The hash value of the key in an occupied slot.
        @inlinable
        func hash(at slot: Int) -> Int { items[slot].key.hash }

        /// Finds the slot of `key`, or claims a free one for it.
        ///
        /// A claimed slot is in the index but holds nothing yet: the caller must ``fill(_:key:value:cost:expiry:)``
        /// it before anything else touches the storage.
        @inlinable
        mutating func slot(claimingFor key: HashedKey) -> (slot: Int, isClaimed: Bool) {
            if let slot = slot(forKey: key) { return (slot, false) }
            let slot = freeSlots.last ?? nodes.count
            index.insert(tag: SlotIndex.tag(key.hash), slot: slot)
            return (slot, true)
        }

        /// Stores a new entry, unlinked, in the slot that ``slot(claimingFor:)`` claimed for
        /// `key`; the caller links it where its policy wants it, which counts its cost.
        @inlinable
        mutating func fill(_ slot: Int, key: HashedKey, value: Value, cost: Int, expiry: Duration?) {
            let node = Node(cost: cost, expiry: expiry)
            if expiry != nil { expiringCount += 1 }
            if slot < nodes.count {
                // A claimed slot below the end is the last free one.
                freeSlots.removeLast()
                nodes[slot] = node
                links[slot] = Link()
            } else {
                nodes.append(node)
                links.append(Link())
            }
            initializeItem(slot, to: Item(key: key, value: value))
        }

        /// Unlinks and frees an entry, returning it so that the caller can release its value
        /// outside the lock or hand it to the eviction callback.
        @inlinable
        mutating func remove(at slot: Int) -> Entry {
            // The hand moves on to the next newer entry, where it would have gone next; past
            // the head it is `none` and starts again at the tail.
            if slot == hand { hand = links[slot].previous }
            unlink(slot)
            if nodes[slot].expiry != nil { expiringCount -= 1 }
            let item = takeItem(slot)
            freeSlots.append(slot)
            index.remove(tag: SlotIndex.tag(item.key.hash), slot: slot)
            return Entry(key: item.key.key, value: item.value)
        }

        /// Replaces an entry's value, cost and expiry in place, returning the old value.
        @inlinable
        mutating func replace(at slot: Int, value: Value, cost: Int, expiry: Duration?) -> Value {
            let change = cost - nodes[slot].cost
            if nodes[slot].isInSmallQueue { small.cost += change } else { main.cost += change }
            nodes[slot].cost = cost
            expiringCount += (expiry == nil ? 0 : 1) - (nodes[slot].expiry == nil ? 0 : 1)
            nodes[slot].expiry = expiry
            var old = value
            swap(&old, &items[slot].value)
            return old
        }

        /// Links an unlinked entry at the head of the small queue or of ``main``.
        @inlinable
        mutating func link(_ slot: Int, intoSmallQueue isSmall: Bool) {
            nodes[slot].isInSmallQueue = isSmall
            items[slot].mark.isInSmallQueue = isSmall
            if isSmall {
                Self.link(slot, cost: nodes[slot].cost, atHeadOf: &small, links: &links)
            } else {
                Self.link(slot, cost: nodes[slot].cost, atHeadOf: &main, links: &links)
            }
        }

        /// Unlinks an entry from the queue it is in.
        @inlinable
        mutating func unlink(_ slot: Int) {
            if nodes[slot].isInSmallQueue {
                Self.unlink(slot, cost: nodes[slot].cost, from: &small, links: &links)
            } else {
                Self.unlink(slot, cost: nodes[slot].cost, from: &main, links: &links)
            }
        }

        /// Moves an entry of ``main`` to its head.
        ///
        /// LRU's hit path: it relinks in place, without the queue choice and the count and cost
        /// bookkeeping of ``unlink(_:)`` and ``link(_:intoSmallQueue:)``.
        @inlinable
        mutating func moveToFront(_ slot: Int) {
            Self.moveToFront(slot, of: &main, links: &links)
        }

        /// Moves an entry of the small queue to its head (the adaptive policy's window is an LRU
        /// queue).
        ///
        /// Relinks in place, as ``moveToFront(_:)`` does for ``main``.
        @inlinable
        mutating func moveToFrontOfSmallQueue(_ slot: Int) {
            Self.moveToFront(slot, of: &small, links: &links)
        }

        /// Moves `slot`, an entry of `queue`, to the queue's head by relinking it in place.
        @inlinable
        static func moveToFront(_ slot: Int, of queue: inout Queue, links: inout [Link]) {
            let head = queue.head
            guard slot != head else { return }
            // Not the head, so it has a newer neighbour, and the queue has a head.
            let previous = links[slot].previous
            let next = links[slot].next
            links[previous].next = next
            if next != Storage.none { links[next].previous = previous } else { queue.tail = previous }
            links[slot].previous = Storage.none
            links[slot].next = head
            links[head].previous = slot
            queue.head = slot
        }

        /// Moves an entry from the small queue, or from within ``main``, to the head of ``main``.
        @inlinable
        mutating func moveToHeadOfMain(_ slot: Int) {
            unlink(slot)
            link(slot, intoSmallQueue: false)
        }

        @inlinable
        static func link(_ slot: Int, cost: Int, atHeadOf queue: inout Queue, links: inout [Link]) {
            links[slot].previous = Storage.none
            links[slot].next = queue.head
            if queue.head != Storage.none { links[queue.head].previous = slot } else { queue.tail = slot }
            queue.head = slot
            queue.count += 1
            queue.cost += cost
        }

        @inlinable
        static func unlink(_ slot: Int, cost: Int, from queue: inout Queue, links: inout [Link]) {
            let previous = links[slot].previous
            let next = links[slot].next
            if previous != Storage.none { links[previous].next = next } else { queue.head = next }
            if next != Storage.none { links[next].previous = previous } else { queue.tail = previous }
            links[slot].previous = Storage.none
            links[slot].next = Storage.none
            queue.count -= 1
            queue.cost -= cost
        }

        /// The entries from the tail of each queue to its head, the small queue first: the order
        /// in which LRU would evict them, and for the FIFO policies, oldest first.
        func slotsFromBack() -> some Sequence<Int> {
            sequence(state: (slot: small.tail, isInSmallQueue: true)) { state in
                if state.slot == Storage.none && state.isInSmallQueue { state = (main.tail, false) }
                guard state.slot != Storage.none else { return nil }
                defer { state.slot = links[state.slot].previous }
                return state.slot
            }
        }

        /// Describes the first broken invariant of the queues, the index, the running totals or
        /// the policies' state.
        ///
        /// Returns `nil` if all hold. For tests; O(n).
        func invariantViolation() -> String? {
            guard links.count == nodes.count else { return "\(links.count) links for \(nodes.count) nodes" }
            guard items == itemBuffer.items, occupied == itemBuffer.occupied, itemCapacity == itemBuffer.capacity else {
                return "the items are not where their buffer is"
            }
            if let violation = index.invariantViolation() { return violation }
            var linked: Set<Int> = []
            for (name, queue, isSmall) in [("main", main, false), ("small", small, true)] {
                var slot = queue.head
                var previous = Storage.none
                var visited = 0
                var cost = 0
                while slot != Storage.none {
                    guard linked.count < count, holdsItem(at: slot) else {
                        return "\(name) is longer than the index or cyclic"
                    }
                    let item = items[slot]
                    guard item.key.hash == item.key.key.hashValue else { return "slot \(slot) has a wrong hash" }
                    let key = item.key
                    let node = nodes[slot]
                    let link = links[slot]
                    guard link.previous == previous else { return "slot \(slot) links back to \(link.previous)" }
                    guard self.slot(forKey: key) == slot else { return "index maps \(key) elsewhere than slot \(slot)" }
                    guard node.isInSmallQueue == isSmall, item.mark.isInSmallQueue == isSmall else {
                        return "slot \(slot) is in \(name) but not marked so"
                    }
                    let frequency = item.mark.frequency
                    guard frequency <= 3 else { return "slot \(slot) has frequency \(frequency)" }
                    linked.insert(slot)
                    visited += 1
                    cost += node.cost
                    previous = slot
                    slot = link.next
                }
                if previous != queue.tail { return "\(name) tail is \(queue.tail), the walk ended at \(previous)" }
                if visited != queue.count { return "\(name) has \(visited) nodes, its count is \(queue.count)" }
                if cost != queue.cost { return "\(name) nodes cost \(cost), its cost is \(queue.cost)" }
            }
            if linked.count != count { return "queues hold \(linked.count) nodes, the index \(count)" }
            if linked.count + freeSlots.count != nodes.count { return "free list does not cover the empty slots" }
            if let slot = freeSlots.first(where: holdsItem) { return "free slot \(slot) holds an item" }
            if hand != Storage.none && (!linked.contains(hand) || nodes[hand].isInSmallQueue) {
                return "hand \(hand) is not an entry of main"
            }
            let expiring = linked.count(where: { nodes[$0].expiry != nil })
            if expiring != expiringCount { return "\(expiring) entries expire, the count is \(expiringCount)" }
            let storedFingerprints = Set(linked.map { items[$0].key.hash })
            if let ghost = ghosts.fingerprintsOldestFirst.first(where: storedFingerprints.contains) {
                return "fingerprint \(ghost) is both stored and a ghost"
            }
            return ghosts.invariantViolation()
        }
    }
}
