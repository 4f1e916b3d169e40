import Foundation
import Stash

/// Replays a `time,key,size` CSV trace and prints object and byte miss ratios, either through
/// the eviction simulator (DiskCache's own policy code, no bytes stored), end to end
/// through a real DiskCache (a get per request, a store of `size` bytes on a miss), or through
/// a real MemoryCache (`TraceReplay+Memory.swift`).
struct TraceReplay {
    struct Request {
        var key: String
        var size: Int
    }

    /// Reads `time,key,size` lines (a header line, or any line whose size is not a number, is
    /// skipped), at most `limit` requests.
    ///
    /// Parses bytes directly: splitting a 19 MB string into substrings took ~3 s for 1M lines,
    /// this takes a fraction of a second. Each distinct key becomes one shared `String`.
    static func load(_ path: String, limit: Int?) throws -> [Request] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        var requests: [Request] = []
        requests.reserveCapacity(limit ?? 1_000_000)
        var keys: [[UInt8]: String] = [:]
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var lineStart = 0
            while lineStart < bytes.count {
                if let limit, requests.count >= limit { break }
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                defer { lineStart = lineEnd + 1 }
                // Fields: time, key, size (anything after the size is ignored).
                var commas: [Int] = []
                for position in lineStart..<lineEnd where bytes[position] == UInt8(ascii: ",") {
                    commas.append(position)
                    if commas.count == 3 { break }
                }
                guard commas.count >= 2 else { continue }
                var sizeEnd = commas.count == 3 ? commas[2] : lineEnd
                if sizeEnd > commas[1] + 1 && bytes[sizeEnd - 1] == UInt8(ascii: "\r") { sizeEnd -= 1 }
                var size = 0
                var isNumber = sizeEnd > commas[1] + 1
                for position in (commas[1] + 1)..<sizeEnd {
                    let digit = Int(bytes[position]) - 48
                    guard digit >= 0 && digit <= 9 else {
                        isNumber = false
                        break
                    }
                    size = size * 10 + digit
                }
                guard isNumber else { continue }  // the header
                let keyBytes = Array(bytes[(commas[0] + 1)..<commas[1]])
                let key: String
                if let known = keys[keyBytes] {
                    key = known
                } else {
                    key = String(decoding: keyBytes, as: UTF8.self)
                    keys[keyBytes] = key
                }
                requests.append(Request(key: key, size: size))
            }
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
        /// The policy's name (``EvictionPolicy`` or ``MemoryEvictionPolicy``, which spell them alike).
        var policy: String
        var cacheBytes: Int
        var requests: Int
        var objectMissRatio: Double
        var byteMissRatio: Double
        var seconds: Double
        var hits: [Bool]
        /// The adaptive policy's window share at the end of the replay.
        var windowShare: Double? = nil

        /// One JSON line: the trace, the cache size (as given, and in bytes), the settings and
        /// the outcome.
        func jsonLine(trace: String, cacheLabel: String, lowWaterMark: Double) -> String {
            """
            {"impl": "stash", "trace": "\(trace)", "mode": "\(mode)", "policy": "\(policy)", \
            "cache_size": "\(cacheLabel)", "cache_bytes": \(cacheBytes), "low_water_mark": \(lowWaterMark), \
            "requests": \(requests), "object_miss_ratio": \(String(format: "%.5f", objectMissRatio)), \
            "byte_miss_ratio": \(String(format: "%.5f", byteMissRatio)), "seconds": \(String(format: "%.3f", seconds))\
            \(windowShare.map { ", \"window_share\": \(String(format: "%.3f", $0))" } ?? "")}
            """
        }
    }

    static func simulate(
        _ requests: [Request], policy: EvictionPolicy, cacheBytes: Int, lowWaterMark: Double, keepHits: Bool
    ) throws -> Outcome {
        let start = now()
        var simulator = EvictionSimulator(
            policy: policy, limits: EvictionLimits(sizeLimit: cacheBytes, countLimit: nil, lowWaterMark: lowWaterMark))
        var hits: [Bool] = []
        if keepHits { hits.reserveCapacity(requests.count) }
        for request in requests {
            let hit = try simulator.request(key: request.key, size: request.size)
            if keepHits { hits.append(hit) }
        }
        return Outcome(
            mode: "simulated", policy: "\(policy)", cacheBytes: cacheBytes, requests: requests.count,
            objectMissRatio: simulator.objectMissRatio, byteMissRatio: simulator.byteMissRatio,
            seconds: Double(now() - start) / 1e9, hits: hits,
            windowShare: policy == .adaptive ? simulator.index.frequencySketch?.climber.windowShare : nil)
    }

    static func endToEnd(
        _ requests: [Request], policy: EvictionPolicy, cacheBytes: Int, lowWaterMark: Double,
        writeMode: DiskCache.WriteMode = .writeBehind
    ) throws -> Outcome {
        try withScratchDirectory { dir in
            var configuration = DiskCache.Configuration(
                sizeLimit: .bytes(cacheBytes), lowWaterMark: lowWaterMark, evictionPolicy: policy,
                reclaimsOrphansOnOpen: false)
            configuration.writeMode = writeMode
            let cache = try DiskCache(directory: dir, configuration: configuration)
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
                mode: "disk", policy: "\(policy)", cacheBytes: cacheBytes, requests: requests.count,
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
