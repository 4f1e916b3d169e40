import Foundation
import Testing

@testable import Stash

/// A tiny in-memory reference of what a DiskCache with LRU eviction must hold.
private struct ReferenceModel {
    struct Entry {
        var value: Data
        var isPinned: Bool
        var expires: Double?
        var lastUse: Int
    }

    var entries: [String: Entry] = [:]
    var tick = 0
    let sizeLimit: Int
    let countLimit: Int
    let lowWaterMark: Double

    var evictable: [(key: String, entry: Entry)] { entries.filter { !$0.value.isPinned }.map { ($0.key, $0.value) } }
    var totalSize: Int { entries.values.reduce(0) { $0 + $1.value.count } }
    var pinnedSize: Int { entries.values.filter(\.isPinned).reduce(0) { $0 + $1.value.count } }

    func isLive(_ key: String, now: Double) -> Bool {
        guard let entry = entries[key] else { return false }
        return entry.isPinned || entry.expires.map { $0 > now } ?? true
    }

    mutating func store(_ value: Data, key: String, ttl: Double?, pinned: Bool?, now: Double) {
        tick += 1
        let isPinned = pinned ?? entries[key]?.isPinned ?? false
        entries[key] = Entry(value: value, isPinned: isPinned, expires: ttl.map { now + $0 }, lastUse: tick)
        evictIfNeeded(protecting: key, now: now)
    }

    mutating func get(_ key: String, now: Double) -> Data? {
        guard let entry = entries[key] else { return nil }
        if !isLive(key, now: now) {
            entries[key] = nil
            return nil
        }
        tick += 1
        entries[key]!.lastUse = tick
        return entry.value
    }

    mutating func evictIfNeeded(protecting protected: String?, now: Double) {
        let size = evictable.reduce(0) { $0 + $1.entry.value.count }
        guard size > sizeLimit || evictable.count > countLimit else { return }
        evict(
            protecting: protected, now: now, targetSize: Int(Double(sizeLimit) * lowWaterMark),
            targetCount: Int(Double(countLimit) * lowWaterMark))
    }

    mutating func evict(protecting protected: String?, now: Double, targetSize: Int, targetCount: Int) {
        for (key, entry) in evictable where key != protected && (entry.expires.map { $0 <= now } ?? false) {
            entries[key] = nil
        }
        var candidates = evictable.filter { $0.key != protected }.sorted { $0.entry.lastUse < $1.entry.lastUse }
        var size = evictable.reduce(0) { $0 + $1.entry.value.count }
        var count = evictable.count
        while size > targetSize || count > targetCount, !candidates.isEmpty {
            let victim = candidates.removeFirst()
            entries[victim.key] = nil
            size -= victim.entry.value.count
            count -= 1
        }
    }
}

@Suite struct DiskCacheModelTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAReferenceModelAfterEveryStepOfARandomSequence(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            let clock = TestClock()
            let configuration = DiskCache.Configuration(
                sizeLimit: .bytes(30_000), countLimit: 12, lowWaterMark: 0.8, inlineThreshold: .bytes(1024),
                evictionPolicy: .leastRecentlyUsed, accessFlushBatch: 7, clock: clock.function)
            var cache = try DiskCache(directory: dir, configuration: configuration)
            var model = ReferenceModel(sizeLimit: 30_000, countLimit: 12, lowWaterMark: 0.8)
            var generator = SplitMix64(seed: seed)
            let keys = (0..<30).map { "key \($0)" }
            for step in 0..<1500 {
                let key = keys.randomElement(using: &generator)!
                let now = clock.date.timeIntervalSince1970
                switch Int.random(in: 0..<100, using: &generator) {
                case 0..<35:
                    let value = pattern(Int.random(in: 0...4000, using: &generator), seed: UInt64(step))
                    let ttl: Double? =
                        Bool.random(using: &generator) ? Double(Int.random(in: 1...50, using: &generator)) : nil
                    let pinned: Bool? = Int.random(in: 0..<20, using: &generator) == 0 ? true : nil
                    try cache.store(value, forKey: key, timeToLive: ttl.map { .seconds($0) }, pinned: pinned)
                    model.store(value, key: key, ttl: ttl, pinned: pinned, now: now)
                case 35..<75:
                    #expect(try cache.data(forKey: key) == model.get(key, now: now), "step \(step)")
                case 75..<82:
                    try cache.removeData(forKey: key)
                    model.entries[key] = nil
                case 82..<86:
                    try cache.unpin(key)
                    if model.entries[key] != nil {
                        model.entries[key]!.isPinned = false
                        model.evictIfNeeded(protecting: key, now: now)
                    }
                case 86..<95:
                    clock.advance(by: Double(Int.random(in: 1...10, using: &generator)))
                case 95..<98:
                    let target = Int.random(in: 0...30_000, using: &generator)
                    try cache.trim(toSize: .bytes(target))
                    model.evict(protecting: nil, now: now, targetSize: target, targetCount: .max)
                default:
                    cache.close()
                    cache = try DiskCache(directory: dir, configuration: configuration)
                }
                let later = clock.date.timeIntervalSince1970
                #expect(try cache.totalSize.bytes == model.totalSize, "step \(step)")
                #expect(try cache.totalCount == model.entries.count, "step \(step)")
                #expect(try cache.pinnedSize.bytes == model.pinnedSize, "step \(step)")
                #expect(Set(try cache.allKeys) == Set(model.entries.keys), "step \(step)")
                for key in keys {
                    #expect(try cache.containsData(forKey: key) == model.isLive(key, now: later), "step \(step) \(key)")
                }
            }
            for key in keys {
                #expect(try cache.data(forKey: key) == model.get(key, now: clock.date.timeIntervalSince1970))
            }
            #expect(try cache.verify().isHealthy)
        }
    }
}
