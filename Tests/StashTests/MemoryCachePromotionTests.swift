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
    /// A refused one changes no entry, and (almost) none is admitted: a sketch estimate can
    /// collide, so a few may get in.
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
        #expect(admitted <= 10, "\(admitted) of 500 one-off hits admitted")
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
}
