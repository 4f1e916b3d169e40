import Foundation
import Stash

/// The disk micro-benchmarks of the shared contract: set, get-hit, get-miss, set-full,
/// delete and open-100k.
struct DiskWorkloads {
    var runs: Int
    var quick: Bool
    /// The eviction policy of every cache the workloads open (`--policy`; the library's
    /// default otherwise), recorded in each measurement.
    var policy = DiskCache.Configuration().evictionPolicy
    /// The commit-per-store mode (`--immediate`) instead of write-behind.
    var immediate = false
    /// Write-behind with value files written by the background writer (`--files-on-writer`,
    /// `true`) or by the storing thread (`--files-on-caller`, `false`); the library's default
    /// when `nil`.
    var filesOnWriter: Bool?

    func configure(_ configuration: inout DiskCache.Configuration) {
        if immediate { configuration.writeMode = .immediate }
        if let filesOnWriter { configuration.writesValueFilesInBackground = filesOnWriter }
    }

    static let sizes = [1024, 32 * 1024, 256 * 1024, 2 * 1024 * 1024]
    /// The value sizes measured (`--sizes 32768,262144`; all of ``sizes`` otherwise).
    var sizes = DiskWorkloads.sizes

    func ops(for size: Int) -> Int {
        let full = [1024: 2000, 32 * 1024: 500, 256 * 1024: 200, 2 * 1024 * 1024: 100][size] ?? 100
        return quick ? max(10, full / 10) : full
    }

    func unlimited(_ dir: URL) throws -> DiskCache {
        var configuration = DiskCache.Configuration(
            sizeLimit: .gigabytes(1000), evictionPolicy: policy, reclaimsOrphansOnOpen: false)
        configure(&configuration)
        return try DiskCache(directory: dir, configuration: configuration)
    }

    func fill(_ cache: DiskCache, count: Int, size: Int) throws {
        let value = ValueBytes.value(size)
        for i in 0..<count { try cache.store(value, forKey: key(i)) }
        try cache.flush()  // reads are timed against the index, not the staging area
    }

    func all(only: Set<String>?) throws -> [Measurement] {
        var results: [Measurement] = []
        for size in sizes {
            for (name, workload) in [
                ("set", set), ("get-hit", getHit), ("get-miss", getMiss), ("set-full", setFull), ("delete", delete),
            ] as [(String, (Int) throws -> Measurement)] where only?.contains(name) ?? true {
                log("stash \(name) \(size) \(policy)")
                var measurement = try workload(size)
                measurement.policy = policy.description
                results.append(measurement)
            }
        }
        if only?.contains("open") ?? true { results.append(try open()) }
        return results
    }

    func set(_ size: Int) throws -> Measurement {
        let n = ops(for: size)
        let value = ValueBytes.value(size)
        let runs = try measure(runs: runs) {
            try withScratchDirectory { dir in
                let cache = try unlimited(dir)
                let keys = (0..<n).map(key)  // made before the clock starts, as in the Python benchmark
                let start = now()
                for key in keys { try cache.store(value, forKey: key) }
                try cache.flush()  // a store's time includes its commit
                let elapsed = now() - start
                let stored = try cache.totalCount
                precondition(stored == n, "set: \(stored) entries for \(n) stores")
                return elapsed / UInt64(n)
            }
        }
        return Measurement(workload: "set", valueSize: size, ops: n, runs: runs)
    }

    func getHit(_ size: Int) throws -> Measurement {
        let n = ops(for: size)
        let runs = try measure(runs: runs) {
            try withScratchDirectory { dir in
                let cache = try unlimited(dir)
                try fill(cache, count: n, size: size)
                let keys = (0..<n).map(key)
                for key in keys { _ = try cache.data(forKey: key) }
                let start = now()
                for _ in 0..<5 {
                    for key in keys {
                        guard try cache.data(forKey: key)?.count == size else { fatalError("get-hit missed") }
                    }
                }
                return (now() - start) / UInt64(5 * n)
            }
        }
        return Measurement(workload: "get-hit", valueSize: size, ops: 5 * n, runs: runs)
    }

    func getMiss(_ size: Int) throws -> Measurement {
        let n = ops(for: size)
        let runs = try measure(runs: runs) {
            try withScratchDirectory { dir in
                let cache = try unlimited(dir)
                try fill(cache, count: n, size: size)
                let keys = (0..<n).map(absentKey)
                let start = now()
                for _ in 0..<5 {
                    for key in keys where try cache.data(forKey: key) != nil { fatalError("get-miss hit") }
                }
                return (now() - start) / UInt64(5 * n)
            }
        }
        return Measurement(workload: "get-miss", valueSize: size, ops: 5 * n, runs: runs)
    }

    /// Every store evicts: the low-water mark is 1.0 here (the default 0.99 would batch
    /// evictions and make this look cheaper than one eviction per store).
    func setFull(_ size: Int) throws -> Measurement {
        let n = ops(for: size)
        let capacity = min(n, 64 * 1024 * 1024 / size)
        let value = ValueBytes.value(size)
        let evictions = LockedCount()
        let runs = try measure(runs: runs) {
            try withScratchDirectory { dir in
                var configuration = DiskCache.Configuration(
                    sizeLimit: .bytes(capacity * size), lowWaterMark: 1.0, evictionPolicy: policy,
                    reclaimsOrphansOnOpen: false)
                configuration.onEviction = { _ in evictions.add(1) }
                configure(&configuration)
                let cache = try DiskCache(directory: dir, configuration: configuration)
                try fill(cache, count: capacity + capacity / 10, size: size)
                evictions.reset()
                let keys = (0..<n).map { key(capacity + capacity / 10 + $0) }
                let start = now()
                for key in keys { try cache.store(value, forKey: key) }
                try cache.flush()
                let elapsed = now() - start
                precondition(evictions.value == n, "set-full: \(evictions.value) evictions for \(n) stores")
                return elapsed / UInt64(n)
            }
        }
        return Measurement(
            workload: "set-full", valueSize: size, ops: n, runs: runs, extra: ["evicted_per_op": "1.0"])
    }

    func delete(_ size: Int) throws -> Measurement {
        let n = ops(for: size)
        let runs = try measure(runs: runs) {
            try withScratchDirectory { dir in
                let cache = try unlimited(dir)
                try fill(cache, count: n, size: size)
                let keys = (0..<n).map(key)
                let start = now()
                for key in keys { try cache.removeData(forKey: key) }
                try cache.flush()
                let elapsed = now() - start
                let left = try cache.totalCount
                precondition(left == 0, "delete: \(left) entries left")
                return elapsed / UInt64(n)
            }
        }
        return Measurement(workload: "delete", valueSize: size, ops: n, runs: runs)
    }

    /// From opening a cache of 100 000 entries to the first successful get.
    func open() throws -> Measurement {
        let entries = quick ? 10_000 : 100_000
        return try withScratchDirectory { dir in
            log("stash open-\(entries / 1000)k: filling")
            do {
                let cache = try unlimited(dir)
                try fill(cache, count: entries, size: 1024)
                cache.close()
            }
            let middle = key(entries / 2)
            let runs = try measure(runs: runs) {
                let start = now()
                // The default configuration (with the policy the cache was filled under): orphan
                // collection starts in the background, as in an app.
                let cache = try DiskCache(
                    directory: dir, configuration: .init(sizeLimit: .gigabytes(1000), evictionPolicy: policy))
                guard try cache.data(forKey: middle)?.count == 1024 else { fatalError("open: first get missed") }
                let elapsed = now() - start
                cache.close()
                return elapsed
            }
            return Measurement(
                workload: "open-\(entries / 1000)k", valueSize: 1024, ops: 1, runs: runs,
                extra: ["entries": "\(entries)"])
        }
    }
}

/// A thread-safe counter for callbacks.
final class LockedCount: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int) { lock.withLock { count += n } }
    func reset() { lock.withLock { count = 0 } }
    var value: Int { lock.withLock { count } }
}
