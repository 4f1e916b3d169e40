import Testing

@testable import Stash

/// ``MemoryEvictionPolicy/adaptive``: the disk's adaptive TinyLFU in the memory tier.
@Suite struct MemoryAdaptivePolicyTests {
    @Test func isNamedLikeTheDiskPolicy() {
        #expect(MemoryEvictionPolicy.adaptive.description == EvictionPolicy.adaptive.description)
    }

    /// The key's fingerprint lives in the node's padding: a node still takes 32 bytes.
    @Test func theStoredFingerprintKeepsTheNodeAt32Bytes() {
        #expect(MemoryLayout<MemoryCache<String, Int>.Node>.stride == 32)
    }

    /// The window (1 % of 400 entries: 4) is kept in LRU order: a hit moves the entry to the
    /// window's newest end (on disk the window is a CLOCK, which a relink in memory does not need).
    @Test func aHitMovesAWindowEntryToTheNewestEndOfTheWindow() {
        let cache = MemoryCache<String, Int>(countLimit: 400, policy: .adaptive)
        for key in ["a", "b", "c", "d"] { cache[key] = 0 }
        #expect(cache.keysInEvictionOrder == ["a", "b", "c", "d"])

        _ = cache["b"]
        _ = cache["a"]

        #expect(cache.keysInEvictionOrder == ["c", "d", "b", "a"])
        #expect(cache.storageInvariantViolation == nil)
    }

    /// A cache filled without eviction keeps its window at its share (its least recently used
    /// entries move to the main queue as newcomers arrive, at most 16 per insertion), so its first
    /// eviction contests one newcomer rather than moving the whole fill.
    @Test func aFillWithoutEvictionKeepsTheWindowAtItsShare() {
        let entries = 20_000
        let cache = MemoryCache<String, Int>(countLimit: entries, policy: .adaptive, shards: 1)
        func queueCounts() -> (window: Int, main: Int) {
            cache.state.withLock { ($0.storage.small.count, $0.storage.main.count) }
        }
        var largestWindow = 0
        for key in 0..<entries {
            cache["fill-\(key)"] = key
            largestWindow = max(largestWindow, queueCounts().window)
        }
        let share = cache.adaptiveWindowShare
        let windowCount = Int((Double(entries) * share).rounded(.up))
        // The window follows the climber's share, a step of at most 1/16 of the cache behind.
        #expect(queueCounts().window <= windowCount + entries / 16, "share \(share)")
        // At most its starting share (half the cache; a fill has no hits, so the climber only
        // leans down), never the whole fill.
        #expect(largestWindow <= Int((Double(entries) * WindowClimber.startingShare).rounded(.up)))
        #expect(queueCounts().window + queueCounts().main == entries)

        cache["new"] = 0

        #expect(cache.totalCount == entries)
        #expect(cache.storageInvariantViolation == nil)
    }

    /// A scan shorter than the climber's first sample (256 requests), so the window keeps its
    /// starting share (half the cache): the hot entries, read while in the window, move into the
    /// main queue's free room with their reads as the scan fills the window, and from then on
    /// every scanned key must outweigh them in a contest, which none does.
    @Test func keepsTheHotSetThroughAOnePassScanShorterThanASample() {
        let cache = MemoryCache<String, Int>(costLimit: 1_000, countLimit: 100, policy: .adaptive)
        let hot = (0..<20).map { "hot-\($0)" }
        for key in hot { cache[key] = 0 }
        for _ in 0..<2 { for key in hot { _ = cache[key] } }
        for index in 0..<150 where cache["cold-\(index)"] == nil { cache["cold-\(index)"] = index }

        #expect(hot.filter { cache.containsValue(forKey: $0) }.count == hot.count)
        #expect(cache.totalCount == 100)
        #expect(cache.storageInvariantViolation == nil)
    }

    /// The same scan with 200 different sets of keys keeps every hot entry.
    ///
    /// 200 sets are 200 layouts of the keys' hash values in the sketch (seeded anew for every
    /// process, too): an entry moved from the window to the main queue keeps its reads, so the
    /// last hot entry to move (just before the scan) is not the victim of every contest of the
    /// scan. When moves forgot the reads, about 1 % of the key sets lost that entry.
    @Test func keepsTheHotSetThroughAScanWhateverTheKeysHashValues() {
        var lost: [Int] = []
        for salt in 0..<200 {
            let cache = MemoryCache<String, Int>(costLimit: 1_000, countLimit: 100, policy: .adaptive)
            let hot = (0..<20).map { "hot-\(salt)-\($0)" }
            for key in hot { cache[key] = 0 }
            for _ in 0..<2 { for key in hot { _ = cache[key] } }
            for index in 0..<150 where cache["cold-\(salt)-\(index)"] == nil { cache["cold-\(salt)-\(index)"] = index }
            if hot.contains(where: { !cache.containsValue(forKey: $0) }) { lost.append(salt) }
        }
        #expect(lost == [])
    }

    /// The default policy is ``MemoryEvictionPolicy/adaptive``: the same one-pass scan (with
    /// the hot set read in a seeded order, 210 reads, within the climber's first sample) that
    /// flushes every hot entry from an LRU cache leaves them all in a default cache.
    @Test func theDefaultCacheIsAdaptiveAndKeepsTheHotSetThroughAScanThatFlushesLRU() {
        let byDefault = MemoryCache<String, Int>(countLimit: 100)
        let lru = MemoryCache<String, Int>(countLimit: 100, policy: .leastRecentlyUsed)
        var random = SplitMix64(seed: 13)
        let hot = (0..<20).map { "hot-\($0)" }
        let reads = hot.shuffled(using: &random) + hot.shuffled(using: &random)
        for cache in [byDefault, lru] {
            for key in hot { cache[key] = 0 }
            for key in reads { _ = cache[key] }
            for index in 0..<150 where cache["cold-\(index)"] == nil { cache["cold-\(index)"] = index }
        }

        #expect(byDefault.policy == .adaptive)
        #expect(hot.filter { byDefault.containsValue(forKey: $0) } == hot)
        #expect(hot.filter { lru.containsValue(forKey: $0) } == [])
        #expect(byDefault.totalCount == 100)
        #expect(lru.totalCount == 100)
        #expect(byDefault.storageInvariantViolation == nil)
    }

    /// A feed read newest first, then one-hit keys: a post is read again only after more than
    /// a small window's worth of newcomers (as in `AdaptivePolicyTests`).
    ///
    /// The sketch hashes keys with the process's random seed, so the count of misses varies
    /// from run to run (26 runs: from 2.7 % below to 0.3 % above LRU's); the bound is issue 13's,
    /// at most one point of miss ratio above LRU. A window that stayed small misses far more.
    @Test func theWindowGrowsOnARecencyWorkloadAndMissesAtMostOnePointMoreThanLRU() {
        var random = SplitMix64(seed: 5)
        let adaptive = MemoryCache<String, Int>(costLimit: .max, countLimit: 1_000, policy: .adaptive)
        let lru = MemoryCache<String, Int>(costLimit: .max, countLimit: 1_000, policy: .leastRecentlyUsed)
        var misses = (adaptive: 0, lru: 0)
        var requests = 0
        var largestShare = 0.0
        for round in 0..<80 {
            let newest = 10 * round + 9
            let depth = Int.random(in: 100...400, using: &random)
            let keys =
                (0..<min(depth, newest + 1)).map { "post-\(newest - $0)" } + (0..<600).map { "scan-\(round)-\($0)" }
            requests += keys.count
            for key in keys {
                if adaptive[key] == nil {
                    misses.adaptive += 1
                    adaptive[key] = round
                }
                if lru[key] == nil {
                    misses.lru += 1
                    lru[key] = round
                }
            }
            largestShare = max(largestShare, adaptive.adaptiveWindowShare)
        }
        #expect(largestShare >= 0.15, "largest window share \(largestShare)")
        #expect(misses.adaptive <= misses.lru + requests / 100, "misses \(misses) of \(requests)")
        #expect(adaptive.storageInvariantViolation == nil)
    }

    /// A cost-100 cache (window share 0.5: a window of cost 50) whose main queue holds 50
    /// entries of cost 1 read three times each, and whose window holds 50 unread entries of cost 1.
    ///
    /// Within the climber's first sample and the sketch's first halving, so the share and the
    /// counts stay as set.
    private func cacheWithAReadMainQueue() -> (cache: MemoryCache<String, Int>, read: [String], unread: [String]) {
        let cache = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 1, policy: .adaptive)
        let read = (0..<50).map { "read-\($0)" }
        for key in read {
            cache.setValue(0, forKey: key, cost: 1)
            for _ in 0..<3 { _ = cache[key] }
        }
        // Each newcomer pushes the window over its share: its oldest entry moves into the main
        // queue's free room.
        let unread = storeUnseenNewcomers("unread", count: 50, in: cache)
        let queues = cache.state.withLock { ($0.storage.main.count, $0.storage.small.count) }
        #expect(queues == (50, 50))
        return (cache, read, unread)
    }

    /// Stores `count` unread newcomers of cost 1, skipping each key whose sketch counters all
    /// collide with counted keys' (its estimate before it is stored is above zero).
    ///
    /// The sketch hashes with the per-process seed of Swift's hashing, and its table is small
    /// while the cache fills: in about one process in 18 an unread newcomer's counters all
    /// collided with read keys', so it looked requested more often than a read entry and won a
    /// contest it should lose (150 runs of this suite: 8 failed with the newcomers of the
    /// tests alone filtered, 0 with every unread key filtered). That is the sketch's error, not
    /// the rule under test.
    @discardableResult
    private func storeUnseenNewcomers(_ prefix: String, count: Int, in cache: MemoryCache<String, Int>) -> [String] {
        var stored: [String] = []
        var index = 0
        while stored.count < count {
            let key = "\(prefix)-\(index)"
            index += 1
            let fingerprint = UInt32(truncatingIfNeeded: key.hashValue)
            guard cache.state.withLock({ $0.storage.admission.estimate(fingerprint) }) == 0 else { continue }
            cache.setValue(0, forKey: key, cost: 1)
            stored.append(key)
        }
        return stored
    }

    /// A newcomer that finds the window exactly at its share still goes through the window's
    /// contest: it counts in the window while room is made for it. (Counted only once linked, it
    /// let every such newcomer evict a main-queue entry with no contest.)
    @Test func aNewcomerMakesRoomThroughTheWindowsContestEvenWhenTheWindowIsAtItsShare() {
        let (cache, read, unread) = cacheWithAReadMainQueue()

        storeUnseenNewcomers("new", count: 30, in: cache)

        #expect(read.filter { cache.containsValue(forKey: $0) } == read)
        #expect(unread.filter { cache.containsValue(forKey: $0) } == Array(unread[30...]))
        #expect(cache.totalCost == 100)
        #expect(cache.storageInvariantViolation == nil)
    }

    /// A window entry of cost 30 read five times loses the contest against the 30 main-queue
    /// entries it would push out (read three times each: more requests together), as on disk;
    /// compared with a single victim it won and took their room.
    @Test func aCostlyCandidateMustOutweighEveryEntryItWouldPushOut() {
        let (cache, read, _) = cacheWithAReadMainQueue()
        cache.setValue(0, forKey: "large", cost: 30)
        for _ in 0..<5 { _ = cache["large"] }
        // Twenty unread newcomers take the place of the window's older entries, so "large"
        // becomes the window's least recently used entry; the next one makes it the candidate.
        storeUnseenNewcomers("late", count: 20, in: cache)
        #expect(cache.keysInEvictionOrder.first == "large")

        storeUnseenNewcomers("trigger", count: 1, in: cache)

        #expect(!cache.containsValue(forKey: "large"))
        #expect(read.filter { cache.containsValue(forKey: $0) } == read)
        #expect(cache.totalCost == 71)
        #expect(cache.storageInvariantViolation == nil)
    }
}

/// The contest weighs requests per unit of cost, as on disk (`AdaptiveAdmissionTests`).
@Suite struct MemoryAdaptiveAdmissionTests {
    /// A cost-100 cache at the starting share (a window of cost 50) whose main queue holds eight
    /// unread entries of cost 5 stored once each (40: 10 free) and whose window holds "w0"
    /// (cost 20, stored and read twice), "w1" (20) and "w2" (10), the oldest first; `salt`
    /// renames every key.
    private func cacheAtTheContest(salt: Int) -> MemoryCache<String, Int> {
        let cache = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 1, policy: .adaptive)
        for i in 0..<8 { cache.setValue(0, forKey: "m\(i)-\(salt)", cost: 5) }
        cache.setValue(0, forKey: "w0-\(salt)", cost: 20)
        for _ in 0..<2 { _ = cache["w0-\(salt)"] }
        cache.setValue(0, forKey: "w1-\(salt)", cost: 20)
        cache.setValue(0, forKey: "w2-\(salt)", cost: 10)
        return cache
    }

    /// A candidate requested more often than its victims, but less per unit of cost, is evicted.
    ///
    /// A newcomer of cost 20 puts the cache 10 over: "w0" needs 20 of the main queue, 10 of
    /// them free, and is requested more often than the two victims that give the rest (3
    /// against 2) but less per unit of cost (3 per 20 against 2 per 10), so it is evicted and
    /// the main queue keeps all eight. With plain sums it displaced two of them.
    ///
    /// Over 100 key sets (the sketch hashes keys with a per-process seed), judged where the
    /// sketch's estimates are the requests made (3 for "w0", 1 for the victims): a collision of
    /// counters in the small table can raise them, about once in a thousand key sets.
    @Test func aCandidateTakingFreeRoomMustOutweighItsVictimsPerUnitOfCost() {
        var outcomes: [Int: [String]] = [:]
        var judged = 0
        for salt in 0..<100 {
            let cache = cacheAtTheContest(salt: salt)
            let queues = cache.state.withLock { ($0.storage.main.cost, $0.storage.small.cost) }
            #expect(queues == (40, 50))

            cache.setValue(0, forKey: "new-\(salt)", cost: 20)

            let estimates = ["w0", "m0", "m1"].map { key in
                let fingerprint = UInt32(truncatingIfNeeded: "\(key)-\(salt)".hashValue)
                return cache.state.withLock { $0.storage.admission.estimate(fingerprint) }
            }
            guard estimates == [3, 1, 1] else { continue }
            judged += 1
            let keys = (0..<8).map { "m\($0)" } + ["w0", "w1", "w2", "new"]
            let gone = keys.filter { !cache.containsValue(forKey: "\($0)-\(salt)") }
            if gone != ["w0"] || cache.totalCost != 90 { outcomes[salt] = gone }
            #expect(cache.storageInvariantViolation == nil)
        }
        #expect(judged >= 90, "judged \(judged)")
        #expect(outcomes == [:])
    }

    /// A newcomer alone larger than the window competes for its room.
    ///
    /// Cost 60 in a cost-100 cache whose window is 50: it has no window entry to make its room: it competes with the main queue's CLOCK victims
    /// like any candidate, per unit of cost, and is not kept when it loses. Stored again and
    /// again, its requests add up until it wins. Judged by the sketch's own estimates (the
    /// sketch hashes keys with a per-process seed, and collisions only raise estimates).
    @Test func aNewcomerLargerThanTheWindowMustOutweighItsVictims() {
        let evicted = LockedValue<[String]>([])
        let cache = MemoryCache<String, Int>(costLimit: 100, entryCostLimitRatio: 1, policy: .adaptive)
        cache.onEviction = { key, _, reason in evicted.withLock { $0.append("\(key) \(reason)") } }
        for i in 0..<5 { cache.setValue(i, forKey: "m\(i)", cost: 10) }
        func estimate(_ key: String) -> Int {
            let fingerprint = UInt32(truncatingIfNeeded: key.hashValue)
            return cache.state.withLock { $0.storage.admission.estimate(fingerprint) }
        }
        var stores = 0
        while !cache.containsValue(forKey: "big"), stores < 16 {
            let before = evicted.withLock { $0 }
            cache.setValue(99, forKey: "big", cost: 60)
            stores += 1
            // Its victim would be "m0" (the main queue's oldest, unread): 10 of cost.
            let wins = EvictionPolicy.exceedsPerUnit(estimate("big"), 60, estimate("m0"), 10)
            #expect(cache.containsValue(forKey: "big") == wins, "store \(stores)")
            #expect(
                evicted.withLock { Array($0.dropFirst(before.count)) } == [wins ? "m0 limit" : "big notAdmitted"])
            #expect(cache.storageInvariantViolation == nil)
        }
        #expect(stores > 1)
        #expect(cache.statistics.notAdmitted == stores - 1)
        #expect(cache.value(forKey: "big") == 99)
        #expect(cache.totalCost == 100)
        for i in 1..<5 { #expect(cache.value(forKey: "m\(i)") == i) }
    }

    /// The sketch is widened for the cache's entries only once the cache is full, as on disk:
    /// widened while the cache fills, it kept more of the fill's requests and the climber took
    /// longer samples (more misses on the memory replays of `Benchmarks/POLICIES.md`).
    @Test func theSketchWidensOnlyOnceTheCacheIsFull() {
        let cache = MemoryCache<Int, Int>(costLimit: 20_000, policy: .adaptive, shards: 1)
        func words() -> Int { cache.state.withLock { $0.storage.admission.sketch.words.count } }
        let initial = words()
        for key in 0..<10_000 { cache.setValue(key, forKey: key, cost: 1) }
        #expect(words() == initial)
        for key in 10_000..<30_000 { cache.setValue(key, forKey: key, cost: 1) }
        #expect(cache.totalCost == 20_000)
        #expect(words() > initial)
        #expect(words() >= 20_000 * FrequencySketch.blockedWordsPerEntry)
    }
}
