import Foundation
import Stash

/// Memory-tier and two-tier hit and set paths, in nanoseconds per operation.
struct MemoryWorkloads {
    var runs: Int
    var quick: Bool

    func all() throws -> [Measurement] {
        let n = quick ? 100_000 : 1_000_000
        let entries = 10_000
        let keys = (0..<entries).map { key($0) }
        let value = ValueBytes.value(1024)
        var results: [Measurement] = []

        // The same three workloads under each memory eviction policy; the JSON lines tell them
        // apart by their `policy` field.
        for policy in MemoryEvictionPolicy.all + [.adaptive] {
            let memory = MemoryCache<String, Data>(costLimit: 1 << 30, countLimit: entries * 2, policy: policy)
            for k in keys { memory.setValue(value, forKey: k) }
            log("stash memory-get-hit \(policy)")
            results.append(
                Measurement(
                    workload: "memory-get-hit", valueSize: 1024, ops: n,
                    runs: measure(runs: runs) {
                        var found = 0
                        let start = now()
                        for i in 0..<n where memory.value(forKey: keys[i % entries]) != nil { found += 1 }
                        let elapsed = now() - start
                        precondition(found == n)
                        return elapsed / UInt64(n)
                    },
                    policy: policy.description))
            log("stash memory-set \(policy)")
            results.append(
                Measurement(
                    workload: "memory-set", valueSize: 1024, ops: n,
                    runs: measure(runs: runs) {
                        let start = now()
                        for i in 0..<n { memory.setValue(value, forKey: keys[i % entries]) }
                        return (now() - start) / UInt64(n)
                    },
                    policy: policy.description))
            let bounded = MemoryCache<String, Data>(costLimit: 1 << 30, countLimit: entries / 2, policy: policy)
            log("stash memory-set-evicting \(policy)")
            results.append(
                Measurement(
                    workload: "memory-set-evicting", valueSize: 1024, ops: n,
                    runs: measure(runs: runs) {
                        let start = now()
                        for i in 0..<n { bounded.setValue(value, forKey: keys[i % entries]) }
                        return (now() - start) / UInt64(n)
                    },
                    policy: policy.description))
        }

        // The two-tier hit under the memory default (LRU) and under adaptive, to price a switch.
        for policy in [MemoryEvictionPolicy.leastRecentlyUsed, .adaptive] {
            try withScratchDirectory { dir in
                let cache = try Cache<Data>(
                    directory: dir, sizeLimit: .gigabytes(10), memoryEvictionPolicy: policy, codec: .data)
                for k in keys { try cache.store(value, forKey: k) }
                log("stash cache-get-memory-hit \(policy)")
                results.append(
                    Measurement(
                        workload: "cache-get-memory-hit", valueSize: 1024, ops: n,
                        runs: try measure(runs: runs) {
                            var found = 0
                            let start = now()
                            for i in 0..<n where try cache.value(forKey: keys[i % entries]) != nil { found += 1 }
                            let elapsed = now() - start
                            precondition(found == n)
                            return elapsed / UInt64(n)
                        },
                        policy: policy.description))
            }
        }

        try withScratchDirectory { dir in
            let cache = try Cache<Data>(directory: dir, sizeLimit: .gigabytes(10), codec: .data)
            for k in keys { try cache.store(value, forKey: k) }
            let writes = quick ? 2000 : 20_000
            log("stash cache-set")
            results.append(
                Measurement(
                    workload: "cache-set", valueSize: 1024, ops: writes,
                    runs: try measure(runs: runs) {
                        let start = now()
                        for i in 0..<writes { try cache.store(value, forKey: keys[i % entries]) }
                        return (now() - start) / UInt64(writes)
                    }))
        }
        return results
    }
}
