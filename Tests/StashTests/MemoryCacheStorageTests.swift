import Testing

@testable import Stash

/// The memory tier's slots: items in a buffer of their own, reused free slots, growth, and every
/// value released exactly once, whatever removed it.
@Suite struct MemoryCacheStorageTests {
    /// A value that counts how many of its kind are alive.
    final class Tracked: Sendable {
        let id: Int
        let alive: Counter
        init(_ id: Int, _ alive: Counter) {
            self.id = id
            self.alive = alive
            alive.add(1)
        }
        deinit { alive.add(-1) }
    }

    final class Counter: Sendable {
        private let value = LockedValue(0)
        func add(_ delta: Int) { value.withLock { $0 += delta } }
        var count: Int { value.withLock { $0 } }
    }

    @Test(arguments: MemoryEvictionPolicy.all + [.adaptive])
    func everyValueIsReleasedOnceWhateverRemovedIt(policy: MemoryEvictionPolicy) {
        let alive = Counter()
        do {
            let cache = MemoryCache<Int, Tracked>(countLimit: 1000, policy: policy, shards: 1)
            for key in 0..<3000 { cache.setValue(Tracked(key, alive), forKey: key) }  // Evicts 2000.
            #expect(alive.count == cache.totalCount)
            for key in stride(from: 0, to: 3000, by: 3) { cache.removeValue(forKey: key) }
            for key in stride(from: 1, to: 3000, by: 7) { cache.setValue(Tracked(-key, alive), forKey: key) }
            #expect(alive.count == cache.totalCount)
            cache.trim(toCount: 100)
            #expect(alive.count == 100)
            #expect(cache.storageInvariantViolation == nil)
            cache.removeAll()
            #expect(alive.count == 0)
            for key in 0..<500 { cache.setValue(Tracked(key, alive), forKey: key) }
            #expect(alive.count == 500)
        }
        // The cache is gone: the buffer released what was left in it.
        #expect(alive.count == 0)
    }

    @Test func freedSlotsAreReusedAndTheBufferGrowsPastThem() throws {
        let cache = MemoryCache<Int, Int>(policy: .sieve, shards: 1)
        for key in 0..<100 { cache.setValue(key, forKey: key) }
        for key in 0..<50 { cache.removeValue(forKey: key) }
        let capacity = cache.state.withLock { $0.storage.itemCapacity }
        for key in 100..<150 { cache.setValue(key, forKey: key) }  // Into the 50 freed slots.
        #expect(cache.state.withLock { $0.storage.itemCapacity } == capacity)
        #expect(cache.state.withLock { $0.storage.nodes.count } == 100)
        for key in 150..<1000 { cache.setValue(key, forKey: key) }  // Grows, moving the items.
        #expect(cache.state.withLock { $0.storage.itemCapacity } >= 950)
        #expect(cache.storageInvariantViolation == nil)
        for key in 0..<1000 { #expect(cache.value(forKey: key) == (key < 50 ? nil : key)) }
    }

    /// Heap-allocated string keys (compared in place in their items) through several growths.
    @Test func stringKeysAreFoundThroughTheIndexsGrowth() {
        let cache = MemoryCache<String, Int>(policy: .leastRecentlyUsed, shards: 1)
        for key in 0..<20_000 { cache.setValue(key, forKey: "k\(key)") }
        for key in 0..<20_000 { #expect(cache.value(forKey: "k\(key)") == key) }
        #expect(cache.value(forKey: "k20000") == nil)
        #expect(cache.storageInvariantViolation == nil)
    }
}
