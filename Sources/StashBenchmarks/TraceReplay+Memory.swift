import Foundation
import Stash

extension TraceReplay {
    /// The memory tier's policies by the names the replay accepts: `lru`, `sieve`, `s3-fifo`,
    /// `adaptive` (as ``EvictionPolicy`` spells them).
    static let memoryPolicies: [MemoryEvictionPolicy] = MemoryEvictionPolicy.all + [.adaptive]

    /// Replays `requests` through a real ``MemoryCache`` whose cost is the object's size: a
    /// lookup per request, a store of the object on a miss.
    ///
    /// The cache may give one entry its whole cost limit (`entryCostLimitRatio` 1, where the
    /// default keeps no entry over a tenth of it), so that it refuses only what DiskCache and
    /// libCacheSim refuse: an object larger than the cache. The value is a placeholder; the
    /// cost is what the policies see.
    static func memory(_ requests: [Request], policy: MemoryEvictionPolicy, cacheBytes: Int) -> Outcome {
        let cache = MemoryCache<String, Int>(costLimit: cacheBytes, entryCostLimitRatio: 1, policy: policy)
        let start = now()
        var misses = 0
        var missedBytes = 0
        var totalBytes = 0
        for request in requests {
            totalBytes += request.size
            if cache.value(forKey: request.key) != nil { continue }
            misses += 1
            missedBytes += request.size
            cache.setValue(request.size, forKey: request.key, cost: request.size)
        }
        return Outcome(
            mode: "memory", policy: "\(policy)", cacheBytes: cacheBytes, requests: requests.count,
            objectMissRatio: Double(misses) / Double(max(1, requests.count)),
            byteMissRatio: Double(missedBytes) / Double(max(1, totalBytes)),
            seconds: Double(now() - start) / 1e9, hits: [],
            windowShare: policy == .adaptive ? cache.adaptiveWindowShare : nil)
    }
}
