// Stash's benchmarks. Build in release mode:
//
//   swift run -c release StashBenchmarks [--quick] [--runs N] [--json] [--dir PARENT] [--only set,get-hit,…]
//                                        [--sizes 1024,32768,…] [--no-disk] [--no-memory] [--no-concurrency]
//                                        [--immediate | --files-on-writer | --files-on-caller]
//   swift run -c release StashBenchmarks replay TRACE.csv [--cache-size 1%,5%,10%] [--policy all|tinylfu,lru,…]
//                                        [--low-water-mark 1.0,0.9] [--mode simulate|disk|both|memory] [--limit N]
//                                        [--write-mode immediate|write-behind] [--json]
//   swift run -c release StashBenchmarks scaling --entries N [--round R] [--dir PARENT] [--template DIR]
//   swift run -c release StashBenchmarks hit-throughput [--dir PARENT]
//   swift run -c release StashBenchmarks loader-disk-hit [--runs N] [--sizes 1024,16384,…]
//   swift run -c release StashBenchmarks memory-tier [--runs N] [--hits N] [--threads 1,2,4]
//                                        [--parts hits,sets,cache] [--only mutex,lru-list,memory-lru,…]
//
// Benchmarks/run-comparison.sh puts the disk numbers beside python-diskcache and the
// file-system floor; Benchmarks/README.md describes the workloads and the JSON lines.
import Foundation
import Stash

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func flag(_ name: String) -> Bool { arguments.contains(name) }

func fail(_ message: String) -> Never {
    log("StashBenchmarks: \(message)")
    exit(64)
}

let json = flag("--json")
let quick = flag("--quick")
let runs = option("--runs").flatMap(Int.init) ?? (quick ? 3 : 5)
if let dir = option("--dir") {
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    scratchParent = URL(fileURLWithPath: dir)
}

func report(_ measurements: [Measurement], title: String) {
    if json {
        for measurement in measurements { print(measurement.jsonLine) }
        return
    }
    print("\n\(title) — median (min–max) of \(runs) runs, per operation")
    print("| workload | size | median | min–max | ops/run |")
    print("|---|---:|---:|---:|---:|")
    for m in measurements {
        let workload = m.policy == "lru" ? m.workload : "\(m.workload) (\(m.policy))"
        let size = m.valueSize >= 1024 * 1024 ? "\(m.valueSize / 1_048_576) MiB" : "\(m.valueSize / 1024) KiB"
        print(
            "| \(workload) | \(size) | \(formatNanoseconds(m.median)) | "
                + "\(formatNanoseconds(m.minimum))–\(formatNanoseconds(m.maximum)) | \(m.ops) |")
    }
}

do {
    switch arguments.first {
    case "concurrency-worker":
        guard arguments.count >= 4, let seed = UInt64(arguments[2]), let operations = Int(arguments[3]) else {
            fail("usage: concurrency-worker DIR SEED OPERATIONS")
        }
        let cache = try DiskCache(directory: URL(fileURLWithPath: arguments[1]), sizeLimit: .gigabytes(1))
        let start = now()
        let latencies = try ConcurrencyWorkloads.work(cache: cache, seed: seed, operations: operations)
        let elapsed = now() - start
        print(latencies.map(String.init).joined(separator: "\n"))
        print("elapsed \(elapsed)")

    case "scaling":
        guard let entries = option("--entries").flatMap(Int.init), entries > 0 else {
            fail("usage: scaling --entries N [--round R] [--dir PARENT]")
        }
        let round = option("--round").flatMap(Int.init) ?? 0
        let template = option("--template").map { URL(fileURLWithPath: $0) }
        for line in try ScalingWorkloads(entries: entries, round: round, template: template).run() { print(line) }

    case "loader-disk-hit":
        let sizes = option("--sizes").map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1024, 16384, 131_072]
        try await loaderDiskHit(runs: runs, sizes: sizes)

    case "hit-throughput":
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        for line in try HitThroughput().run(executable: executable) { print(line) }

    case "hit-worker":
        guard arguments.count >= 4, let seed = UInt64(arguments[2]), let end = Double(arguments[3]) else {
            fail("usage: hit-worker DIR SEED END")
        }
        print(try HitThroughput.worker(directory: arguments[1], seed: seed, end: end))

    case "memory-tier":
        var workloads = MemoryTierWorkloads(runs: option("--runs").flatMap(Int.init) ?? 3)
        if let hits = option("--hits").flatMap(Int.init) { workloads.hits = hits }
        if let threads = option("--threads") {
            workloads.threadCounts = threads.split(separator: ",").compactMap { Int($0) }
        }
        workloads.only = option("--only").map { Set($0.split(separator: ",").map(String.init)) }
        let parts =
            option("--parts").map { Set($0.split(separator: ",").map(String.init)) } ?? ["hits", "sets", "cache"]
        if parts.contains("hits") {
            // The structures it compares against sit behind `Synchronization.Mutex`.
            guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
                fail("memory-tier's hits compare against Synchronization.Mutex: run them on macOS 15 or newer")
            }
            for line in try workloads.run() { print(line) }
        }
        if parts.contains("sets") { for line in workloads.runEvictingSets() { print(line) } }
        if parts.contains("cache") { for line in try workloads.runCacheHits() { print(line) } }

    case "replay":
        guard arguments.count >= 2 else { fail("usage: replay TRACE.csv --cache-size 5% …") }
        try ReplayCommand(trace: arguments[1]).run()

    default:
        let only = option("--only").map { Set($0.split(separator: ",").map(String.init)) }
        if !flag("--no-disk") {
            var disk = DiskWorkloads(runs: runs, quick: quick)
            disk.immediate = flag("--immediate")
            if flag("--files-on-writer") { disk.filesOnWriter = true }
            if flag("--files-on-caller") { disk.filesOnWriter = false }
            if let sizes = option("--sizes") { disk.sizes = sizes.split(separator: ",").compactMap { Int($0) } }
            if let name = option("--policy") {
                guard let policy = EvictionPolicy(name: name) else { fail("unknown policy \(name)") }
                disk.policy = policy
            }
            report(try disk.all(only: only), title: "DiskCache (\(disk.policy))")
        }
        if !flag("--no-memory") {
            report(try MemoryWorkloads(runs: runs, quick: quick).all(), title: "MemoryCache and Cache<Data>")
        }
        if !flag("--no-concurrency") {
            let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
            let results = try ConcurrencyWorkloads(quick: quick).all(executable: executable)
            if json {
                for result in results { print(result.jsonLine) }
            } else {
                print("\nConcurrency — 80 % reads, 20 % writes of 4 KiB values over 2000 keys")
                print("| workers | operations | ops/s | p50 | p99 |")
                print("|---|---:|---:|---:|---:|")
                for r in results {
                    print(
                        "| \(r.label) | \(r.operations) | \(Int(r.throughput)) | \(formatNanoseconds(r.p50)) | "
                            + "\(formatNanoseconds(r.p99)) |")
                }
            }
        }
    }
} catch {
    log("StashBenchmarks failed: \(error)")
    exit(1)
}
