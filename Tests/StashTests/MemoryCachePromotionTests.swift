import Testing

@testable import Stash

/// `MemoryCache.promoteValue`: a lower tier's hit enters memory only when the adaptive policy's
/// sketch rates it above what it would evict.
@Suite struct MemoryCachePromotionTests {
    /// A full cache whose 100 entries were each read 3 times.
    static func hotCache() -> MemoryCache<String, Int> {
        let cache = MemoryCache<String, Int>(countLimit: 100, policy: .adaptive, shards: 1)
        for key in 0..<100 { cache["hot\(key)"] = key }
        for _ in 0..<3 { for key in 0..<100 { _ = cache["hot\(key)"] } }
        return cache
    }

    /// One-off disk hits between reads of the hot set leave the hot set in place.
    ///
    /// A refused one changes no entry, and few are admitted: the sketch's estimates collide, so
    /// some get in. How many depends on the keys' hashes, which Swift seeds anew in every
    /// process: 1 to 21 of the 500 in 520 runs (most often 7 or 8, more than 10 in 3 % of them),
    /// so the bound is about twice the most seen; a policy that admitted every hit would admit
    /// all 500.
    @Test func aRefusedOneOffEvictsNothing() {
        let cache = Self.hotCache()
        var admitted = 0
        for key in 0..<500 {
            for hot in stride(from: key % 5, to: 100, by: 5) { _ = cache["hot\(hot)"] }
            let evictions = cache.statistics.evictions
            if cache.promoteValue(-1, forKey: "cold\(key)") {
                admitted += 1
            } else {
                #expect(cache.statistics.evictions == evictions, "cold\(key)")
                #expect(!cache.containsValue(forKey: "cold\(key)"))
            }
        }
        #expect(admitted <= 40, "\(admitted) of 500 one-off hits admitted")
        #expect((0..<100).filter { cache.containsValue(forKey: "hot\($0)") }.count >= 100 - admitted)
    }

    @Test func aKeyReadFromDiskAgainAndAgainGetsInAndEvicts() {
        let cache = Self.hotCache()
        var admitted = false
        for _ in 0..<8 where !admitted { admitted = cache.promoteValue(1, forKey: "rising") }
        #expect(admitted)
        #expect(cache["rising"] == 1)
        #expect((0..<100).filter { cache.containsValue(forKey: "hot\($0)") }.count == 99)
    }

    @Test func aValueThatFitsInFreeRoomIsAlwaysStored() {
        let cache = MemoryCache<String, Int>(countLimit: 100, policy: .adaptive, shards: 1)
        #expect(cache.promoteValue(1, forKey: "a"))
        #expect(cache["a"] == 1)
        #expect(cache.promoteValue(2, forKey: "a"))
        #expect(cache["a"] == 2)
    }

    @Test func otherPoliciesAlwaysStore() {
        let cache = MemoryCache<String, Int>(countLimit: 2, policy: .leastRecentlyUsed, shards: 1)
        for key in ["a", "b", "c"] { #expect(cache.promoteValue(0, forKey: key)) }
        #expect(!cache.containsValue(forKey: "a"))
    }

    /// `setValueIfRoom` keeps a value only in free room: under every policy, a full cache
    /// evicts nothing for it and keeps what it had.
    @Test(arguments: [MemoryEvictionPolicy.adaptive, .leastRecentlyUsed])
    func aValueWithoutFreeRoomEvictsNothing(policy: MemoryEvictionPolicy) {
        let cache = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 1, policy: policy, shards: 1)
        #expect(cache.hasRoom(forKey: "a", cost: 60))
        #expect(cache.setValueIfRoom(1, forKey: "a", cost: 60))
        #expect(cache.setValueIfRoom(2, forKey: "b", cost: 30))
        #expect(!cache.hasRoom(forKey: "c", cost: 20))
        #expect(!cache.setValueIfRoom(3, forKey: "c", cost: 20))
        #expect(cache["a"] == 1 && cache["b"] == 2 && cache["c"] == nil)
        #expect(cache.statistics.evictions == 0)
        #expect(cache.setValueIfRoom(4, forKey: "d", cost: 10))
        #expect(cache.totalCost == 100)
    }

    /// Replacing a key's own entry counts that entry's cost as free; a replacement that does not
    /// fit leaves the old value in place.
    @Test func aReplacementCountsTheKeysOwnCostAsFree() {
        let cache = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 1, policy: .adaptive, shards: 1)
        #expect(cache.setValueIfRoom(1, forKey: "a", cost: 70))
        #expect(cache.setValueIfRoom(2, forKey: "b", cost: 20))
        #expect(cache.hasRoom(forKey: "a", cost: 80))
        #expect(cache.setValueIfRoom(3, forKey: "a", cost: 80))
        #expect(cache["a"] == 3 && cache["b"] == 2)
        #expect(!cache.setValueIfRoom(4, forKey: "a", cost: 81))
        #expect(cache["a"] == 3)
    }

    /// The entry cost limit and the count limit bound it as they bound `setValue`.
    @Test func theEntryAndCountLimitsStillHold() {
        let sized = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 0.5, shards: 1)
        #expect(!sized.hasRoom(forKey: "a", cost: 51))
        #expect(!sized.setValueIfRoom(1, forKey: "a", cost: 51))
        #expect(sized.setValueIfRoom(1, forKey: "a", cost: 50))
        let counted = MemoryCache<String, Int>(countLimit: 2, shards: 1)
        #expect(counted.setValueIfRoom(1, forKey: "a") && counted.setValueIfRoom(2, forKey: "b"))
        #expect(!counted.setValueIfRoom(3, forKey: "c"))
        #expect(counted.setValueIfRoom(4, forKey: "b"))
        #expect(counted["a"] == 1 && counted["b"] == 4 && counted.totalCount == 2)
    }
}
