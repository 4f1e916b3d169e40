import Foundation
import Stash

/// Cost per operation against the number of entries: one round at one size of cache, 1 KiB
/// values, with the same keys and operation counts as Benchmarks/python/diskcache_scaling.py.
///
/// `StashBenchmarks scaling --entries N [--round R] [--dir PARENT]` prints one JSON line per
/// workload; Benchmarks/run-scaling.sh interleaves rounds with python-diskcache's.
struct ScalingWorkloads {
    var entries: Int
    var round: Int
    /// A filled cache copied for each round (filled on first use), so that 1M entries are
    /// stored once rather than once a round.
    var template: URL?
    static let valueSize = 1024
    /// Timed operations per workload: enough to swamp timer overhead, few enough that a round
    /// at 1M entries is dominated by its fill.
    static let reads = 20_000
    static let writes = 5_000

    /// The i-th key read by get-hit: a fixed pseudo-random walk over all `n` keys, so that
    /// a large cache is not read only in its first pages.
    static func hitKey(_ i: Int, of n: Int) -> String { key((i &* 7_919 &+ 13) % n) }

    func line(_ workload: String, _ value: Double, unit: String = "ns_per_op") -> String {
        """
        {"impl": "stash", "workload": "\(workload)", "entries": \(entries), "value_size": \(Self.valueSize), \
        "round": \(round), "\(unit)": \(Int(value.rounded()))}
        """
    }

    func run() throws -> [String] {
        try withScratchDirectory { dir in
            var lines: [String] = []
            let value = ValueBytes.value(Self.valueSize)
            let unlimited = DiskCache.Configuration(sizeLimit: .gigabytes(1000), reclaimsOrphansOnOpen: false)
            let filled = template ?? dir
            if template == nil || !FileManager.default.fileExists(atPath: filled.path) {
                log("stash scaling \(entries): filling")
                // Filled under the limit of the full cache below (exactly reached, so nothing is
                // evicted), as a cache in use is: its policy keeps the window at its share and
                // the rest in the main queue. Filled without a limit, every entry stayed in the
                // window, and the stores into the full cache measured the drain of that window
                // after the limit fell a thousandfold (two moves into the main queue per store,
                // a third of their instructions) rather than a full cache.
                var fill = unlimited
                fill.sizeLimit = .bytes(entries * Self.valueSize)
                let cache = try DiskCache(directory: filled, configuration: fill)
                for i in 0..<entries { try cache.store(value, forKey: key(i)) }
                cache.close()
            }
            if let template { try FileManager.default.copyItem(at: template, to: dir) }
            // Set-up writes reach the disk before the clock starts (as on diskcache's side):
            // otherwise the first checkpoint's sync of a timed write flushes the whole freshly
            // copied index (0.7 s at a million entries, on this machine).
            sync()
            let indexBytes = ["", "-wal"].reduce(0) { total, suffix in
                let path = dir.appendingPathComponent("index.sqlite" + suffix).path
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                return total + size
            }
            // Value bytes live in the index (they are inline); what is reported is the overhead.
            lines.append(
                line(
                    "index-bytes-per-entry", Double(indexBytes - entries * Self.valueSize) / Double(entries),
                    unit: "bytes"))

            let openStart = now()
            var cache = try DiskCache(directory: dir, configuration: unlimited)
            guard try cache.data(forKey: key(entries / 2))?.count == Self.valueSize else { fatalError("open: miss") }
            lines.append(line("open", Double(now() - openStart)))

            // Keys are made before the clock starts, as the Python side does: formatting one costs
            // more than a lookup.
            let hitKeys = (0..<Self.reads).map { Self.hitKey($0, of: entries) }
            let absentKeys = (0..<Self.reads).map(absentKey)
            let newKeys = (0..<Self.writes).map { key(entries + $0) }
            let fullKeys = (0..<Self.writes).map { key(2 * entries + $0) }
            for key in hitKeys.prefix(entries) { _ = try cache.data(forKey: key) }
            var start = now()
            for key in hitKeys {
                guard try cache.data(forKey: key)?.count == Self.valueSize else {
                    fatalError("get-hit missed")
                }
            }
            lines.append(line("get-hit", Double(now() - start) / Double(Self.reads)))
            // The hits' policy state is written in the background; what is still in memory is
            // written by close. Timed apart, per hit, so that it is neither hidden nor charged
            // to the writes that follow.
            start = now()
            cache.close()
            lines.append(line("hit-write-on-close", Double(now() - start) / Double(Self.reads)))
            cache = try DiskCache(directory: dir, configuration: unlimited)

            start = now()
            for key in absentKeys where try cache.data(forKey: key) != nil { fatalError("get-miss hit") }
            lines.append(line("get-miss", Double(now() - start) / Double(Self.reads)))

            // Write-behind (the default): a store's time is (N stores + flush()) / N, so that the
            // commit is paid for inside the clock.
            start = now()
            for key in newKeys { try cache.store(value, forKey: key) }
            try cache.flush()
            lines.append(line("set", Double(now() - start) / Double(Self.writes)))

            start = now()
            for key in newKeys { try cache.removeData(forKey: key) }
            try cache.flush()
            lines.append(line("delete", Double(now() - start) / Double(Self.writes)))
            cache.close()

            // The commit-per-store mode, on the same index.
            var immediate = unlimited
            immediate.writeMode = .immediate
            cache = try DiskCache(directory: dir, configuration: immediate)
            start = now()
            for key in newKeys { try cache.store(value, forKey: key) }
            lines.append(line("set-immediate", Double(now() - start) / Double(Self.writes)))
            start = now()
            for key in newKeys { try cache.removeData(forKey: key) }
            lines.append(line("delete-immediate", Double(now() - start) / Double(Self.writes)))
            cache.close()

            // A cache that is exactly full, with the default low-water mark: every store evicts
            // what it needs, in the batches the configuration chooses.
            var full = unlimited
            full.sizeLimit = .bytes(entries * Self.valueSize)
            let fullCache = try DiskCache(directory: dir, configuration: full)
            start = now()
            for key in fullKeys { try fullCache.store(value, forKey: key) }
            try fullCache.flush()
            lines.append(line("set-full", Double(now() - start) / Double(Self.writes)))
            fullCache.close()
            full.writeMode = .immediate
            let fullImmediate = try DiskCache(directory: dir, configuration: full)
            start = now()
            for key in fullKeys { try fullImmediate.store(value, forKey: key + "-i") }
            lines.append(line("set-full-immediate", Double(now() - start) / Double(Self.writes)))
            fullImmediate.close()
            return lines
        }
    }
}

/// Get-hit throughput of one cache directory read by several threads or processes.
struct HitThroughput {
    static let entries = 10_000
    static let seconds = 2.0

    /// Reads random keys until `deadline`; returns the number of hits.
    static let keys = (0..<entries).map(key)

    static func readLoop(cache: DiskCache, seed: UInt64, until deadline: UInt64) throws -> Int {
        var state = seed
        var hits = 0
        let keys = Self.keys
        while now() < deadline {
            for _ in 0..<256 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                guard try cache.data(forKey: keys[Int((state >> 33) % UInt64(entries))]) != nil else {
                    fatalError("hit-throughput missed")
                }
                hits += 1
            }
        }
        return hits
    }

    static func open(_ dir: URL) throws -> DiskCache {
        try DiskCache(
            directory: dir, configuration: .init(sizeLimit: .gigabytes(1000), reclaimsOrphansOnOpen: false))
    }

    func run(executable: String) throws -> [String] {
        try withScratchDirectory { dir in
            do {
                let cache = try Self.open(dir)
                let value = ValueBytes.value(1024)
                for i in 0..<Self.entries { try cache.store(value, forKey: key(i)) }
                cache.close()
            }
            var lines: [String] = []
            func line(_ label: String, _ hits: Int) -> String {
                """
                {"impl": "stash", "workload": "get-hit-throughput", "workers": "\(label)", "value_size": 1024, \
                "entries": \(Self.entries), "hits_per_second": \(Int(Double(hits) / Self.seconds))}
                """
            }
            for threads in [1, 2, 4] {
                log("stash hit throughput, \(threads) threads")
                let cache = try Self.open(dir)
                let total = LockedCount()
                let deadline = now() + UInt64(Self.seconds * 1e9)
                DispatchQueue.concurrentPerform(iterations: threads) { worker in
                    do {
                        total.add(try Self.readLoop(cache: cache, seed: UInt64(worker + 1), until: deadline))
                    } catch {
                        fatalError("thread worker failed: \(error)")
                    }
                }
                cache.close()
                lines.append(line("\(threads) thread\(threads == 1 ? "" : "s")", total.value))
            }
            for processes in [2, 4] {
                log("stash hit throughput, \(processes) processes")
                // The children start at once and read until the same wall-clock deadline.
                let deadline = Date().timeIntervalSince1970 + 1 + Self.seconds
                let children = try (0..<processes).map { worker -> (Process, Pipe) in
                    let process = Process()
                    let pipe = Pipe()
                    process.executableURL = URL(fileURLWithPath: executable)
                    process.arguments = ["hit-worker", dir.path, "\(worker + 21)", "\(deadline)"]
                    process.standardOutput = pipe
                    try process.run()
                    return (process, pipe)
                }
                var hits = 0
                for (process, pipe) in children {
                    let output = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    guard process.terminationStatus == 0 else { fatalError("process worker failed") }
                    hits += Int(
                        String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
                }
                lines.append(line("\(processes) processes", hits))
            }
            return lines
        }
    }

    /// A child process: opens the cache, waits for the shared start, reads for `seconds`.
    static func worker(directory: String, seed: UInt64, end: Double) throws -> Int {
        let cache = try open(URL(fileURLWithPath: directory))
        let start = end - seconds
        while Date().timeIntervalSince1970 < start { usleep(1000) }
        let hits = try readLoop(cache: cache, seed: seed, until: now() + UInt64(seconds * 1e9))
        cache.close()
        return hits
    }
}
