import Foundation
import Stash

/// Replays a `time,key,size` CSV trace and prints object and byte miss ratios, either through
/// the eviction simulator (DiskCache's own policy code, no bytes stored) or end to end
/// through a real DiskCache (a get per request, a store of `size` bytes on a miss).
struct TraceReplay {
    struct Request {
        var key: String
        var size: Int
    }

    static func load(_ path: String, limit: Int?) throws -> [Request] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var requests: [Request] = []
        requests.reserveCapacity(limit ?? 1_000_000)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let limit, requests.count >= limit { break }
            let fields = line.split(separator: ",")
            guard fields.count >= 3, let size = Int(fields[2]) else { continue }  // skips the header
            requests.append(Request(key: String(fields[1]), size: size))
        }
        return requests
    }

    /// Bytes of all distinct objects (each at its first size).
    static func workingSet(_ requests: [Request]) -> Int {
        var seen: [String: Int] = [:]
        for request in requests where seen[request.key] == nil { seen[request.key] = request.size }
        return seen.values.reduce(0, +)
    }

    struct Outcome {
        var mode: String
        var policy: EvictionPolicy
        var cacheBytes: Int
        var requests: Int
        var objectMissRatio: Double
        var byteMissRatio: Double
        var seconds: Double
        var hits: [Bool]

        var jsonLine: String {
            """
            {"impl": "stash", "mode": "\(mode)", "policy": "\(policy)", "cache_bytes": \(cacheBytes), \
            "requests": \(requests), "object_miss_ratio": \(String(format: "%.5f", objectMissRatio)), \
            "byte_miss_ratio": \(String(format: "%.5f", byteMissRatio)), "seconds": \(String(format: "%.3f", seconds))}
            """
        }
    }

    static func simulate(_ requests: [Request], policy: EvictionPolicy, cacheBytes: Int, keepHits: Bool) throws
        -> Outcome
    {
        let start = now()
        var simulator = EvictionSimulator(
            policy: policy, limits: EvictionLimits(sizeLimit: cacheBytes, countLimit: nil, lowWaterMark: 0.9))
        var hits: [Bool] = []
        if keepHits { hits.reserveCapacity(requests.count) }
        for request in requests {
            let hit = try simulator.request(key: request.key, size: request.size)
            if keepHits { hits.append(hit) }
        }
        return Outcome(
            mode: "simulated", policy: policy, cacheBytes: cacheBytes, requests: requests.count,
            objectMissRatio: simulator.objectMissRatio, byteMissRatio: simulator.byteMissRatio,
            seconds: Double(now() - start) / 1e9, hits: hits)
    }

    static func endToEnd(_ requests: [Request], policy: EvictionPolicy, cacheBytes: Int) throws -> Outcome {
        try withScratchDirectory { dir in
            let cache = try DiskCache(
                directory: dir,
                configuration: .init(
                    sizeLimit: .bytes(cacheBytes), evictionPolicy: policy, reclaimsOrphansOnOpen: false))
            let start = now()
            var hits: [Bool] = []
            hits.reserveCapacity(requests.count)
            var missedBytes = 0
            var totalBytes = 0
            for request in requests {
                totalBytes += request.size
                if try cache.data(forKey: request.key) != nil {
                    hits.append(true)
                    continue
                }
                hits.append(false)
                missedBytes += request.size
                if request.size <= cacheBytes {
                    try cache.store(ValueBytes.zeros(request.size), forKey: request.key)
                }
            }
            let misses = hits.lazy.filter { !$0 }.count
            return Outcome(
                mode: "disk", policy: policy, cacheBytes: cacheBytes, requests: requests.count,
                objectMissRatio: Double(misses) / Double(max(1, requests.count)),
                byteMissRatio: Double(missedBytes) / Double(max(1, totalBytes)),
                seconds: Double(now() - start) / 1e9, hits: hits)
        }
    }
}

extension ValueBytes {
    /// Zero bytes for trace replay (content does not matter there; sizes do).
    static func zeros(_ size: Int) -> Data { Data(count: size) }
}
