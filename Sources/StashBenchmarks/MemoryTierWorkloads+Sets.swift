import Foundation
import Stash

extension MemoryTierWorkloads {
    /// Evicting sets: a cache full at 100 000 entries takes `hits / 2` sets of random keys out of
    /// 200 000, so that about half of them insert and evict; nanoseconds per set, one thread.
    func runEvictingSets() -> [String] {
        let values = (0..<entries).map { i in
            var data = ValueBytes.value(256)
            data[0] = UInt8(truncatingIfNeeded: i)
            return data
        }
        let sets = hits / 2
        var state: UInt64 = 0x5e75
        let keys = (0..<sets).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(2 * entries))
        }
        let policies: [(String, MemoryEvictionPolicy)] = [
            ("memory-set-evicting-lru", .leastRecentlyUsed), ("memory-set-evicting-sieve", .sieve),
            ("memory-set-evicting-s3fifo", .s3fifo), ("memory-set-evicting-adaptive", .adaptive),
        ]
        let caches = policies.filter { wants($0.0) }.map { name, policy in
            (name, MemoryCache<Int, Data>(costLimit: .max / 2, countLimit: entries, policy: policy))
        }
        for (_, cache) in caches {
            for i in 0..<entries { cache.setValue(values[i], forKey: i) }
        }
        var samples: [String: [Timing]] = [:]
        for round in 0...runs {
            for (name, cache) in caches {
                let start = now()
                let cpuStart = threadCPUNanoseconds()
                for key in keys { cache.setValue(values[key % entries], forKey: key) }
                let elapsed = Timing(
                    wall: Double(now() - start) / Double(keys.count),
                    cpu: Double(threadCPUNanoseconds() - cpuStart) / Double(keys.count))
                precondition(cache.totalCount <= entries)
                if round > 0 { samples[name, default: []].append(elapsed) }
            }
            log("stash memory-tier sets round \(round) of \(runs)")
        }
        return caches.map { name, _ in
            Timing.jsonLine(workload: name, threads: 1, entries: entries, hits: sets, samples[name]!)
        }
    }

    /// `Cache<Data>`'s memory hit against a bare `MemoryCache<CacheKey, Data>` hit of the same
    /// string keys, under the default (adaptive) policy; one thread, and two.
    func runCacheHits() throws -> [String] {
        let values = (0..<entries).map { i in
            var data = ValueBytes.value(256)
            data[0] = UInt8(truncatingIfNeeded: i)
            return data
        }
        let names = (0..<entries).map { key($0) }
        let cacheKeys = names.map { CacheKey($0) }
        let bare = MemoryCache<CacheKey, Data>(countLimit: 2 * entries, cost: { $0.count })
        for i in 0..<entries { bare.setValue(values[i], forKey: cacheKeys[i]) }
        var state: UInt64 = 0xcace
        let picks = (0..<hits).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(entries))
        }
        return try withScratchDirectory { dir in
            let cache = try Cache<Data>(
                directory: dir, sizeLimit: .gigabytes(10), memoryCountLimit: 2 * entries, codec: .data)
            let fillStart = now()
            for i in 0..<entries { try cache.store(values[i], forKey: names[i]) }
            log("stash memory-tier cache fill: \(Double(now() - fillStart) / 1e9) s")
            var samples: [String: [Timing]] = [:]
            for round in 0...runs {
                for threads in threadCounts where threads <= 2 {
                    samples["memorycache-cachekey|\(threads)", default: []].append(
                        Self.timeStrings(threads, picks) { bare.value(forKey: cacheKeys[$0]) != nil })
                    samples["cache-memory-hit|\(threads)", default: []].append(
                        Self.timeStrings(threads, picks) { (try? cache.value(forKey: names[$0])) != nil })
                }
                if round == 0 { samples = [:] }
                log("stash memory-tier cache round \(round) of \(runs)")
            }
            return samples.keys.sorted().map { label in
                let parts = label.split(separator: "|")
                return Timing.jsonLine(
                    workload: String(parts[0]), threads: Int(parts[1])!, entries: entries, hits: hits, samples[label]!)
            }
        }
    }

    /// As ``time(_:_:_:)``, for a closure over an index into `picks`.
    static func timeStrings(_ threads: Int, _ picks: [Int], _ hit: @escaping @Sendable (Int) -> Bool) -> Timing {
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let cpu = LockedLatencies()
        for t in 0..<threads {
            ready.enter()
            done.enter()
            let thread = Thread {
                let offset = t * picks.count / threads
                ready.leave()
                go.wait()
                let cpuStart = threadCPUNanoseconds()
                var found = 0
                for i in 0..<picks.count {
                    var index = i + offset
                    if index >= picks.count { index -= picks.count }
                    if hit(picks[index]) { found += 1 }
                }
                precondition(found == picks.count, "missed \(picks.count - found) hits")
                cpu.append([threadCPUNanoseconds() - cpuStart])
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        ready.wait()
        let start = now()
        for _ in 0..<threads { go.signal() }
        done.wait()
        return Timing(
            wall: Double(now() - start) / Double(picks.count),
            cpu: Double(cpu.sorted.reduce(0, +)) / Double(threads * picks.count))
    }
}
