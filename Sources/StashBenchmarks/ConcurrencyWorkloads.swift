import Foundation
import Stash

/// Two threads, then two processes, reading (80 %) and writing (20 %) 4 KiB values of one
/// cache: throughput and the 99th-percentile latency of each operation.
struct ConcurrencyWorkloads {
    var quick: Bool
    static let keys = 2000
    static let valueSize = 4096

    struct Result {
        var label: String
        var operations: Int
        var seconds: Double
        var p99: Double
        var p50: Double

        var throughput: Double { Double(operations) / seconds }
        var jsonLine: String {
            """
            {"impl": "stash", "policy": "lru", "workload": "\(label)", "value_size": \(ConcurrencyWorkloads.valueSize), \
            "ops": \(operations), "ops_per_second": \(Int(throughput)), "p50_ns": \(Int(p50)), "p99_ns": \(Int(p99))}
            """
        }
    }

    /// One worker's loop: returns its latencies in nanoseconds.
    static func work(cache: DiskCache, seed: UInt64, operations: Int) throws -> [UInt64] {
        var state = seed
        let value = ValueBytes.value(valueSize)
        var latencies: [UInt64] = []
        latencies.reserveCapacity(operations)
        for _ in 0..<operations {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let k = key(Int((state >> 33) % UInt64(keys)))
            let start = now()
            if (state >> 20) % 10 < 8 {
                _ = try cache.data(forKey: k)
            } else {
                try cache.store(value, forKey: k)
            }
            latencies.append(now() - start)
        }
        return latencies
    }

    static func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }

    func all(executable: String) throws -> [Result] {
        let operations = quick ? 2000 : 20_000
        return try withScratchDirectory { dir in
            do {
                let cache = try DiskCache(directory: dir, sizeLimit: .gigabytes(1))
                let value = ValueBytes.value(Self.valueSize)
                for i in 0..<Self.keys { try cache.store(value, forKey: key(i)) }
                cache.close()
            }
            var results: [Result] = []
            log("stash 2 threads")
            let cache = try DiskCache(directory: dir, sizeLimit: .gigabytes(1))
            let collected = LockedLatencies()
            let start = now()
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                do {
                    collected.append(try Self.work(cache: cache, seed: UInt64(worker + 1), operations: operations))
                } catch {
                    fatalError("thread worker failed: \(error)")
                }
            }
            let threadSeconds = Double(now() - start) / 1e9
            let threadLatencies = collected.sorted
            results.append(
                Result(
                    label: "2-threads", operations: threadLatencies.count, seconds: threadSeconds,
                    p99: Self.percentile(threadLatencies, 0.99), p50: Self.percentile(threadLatencies, 0.5)))
            cache.close()

            log("stash 2 processes")
            let children = try (0..<2).map { worker -> (Process, Pipe) in
                let process = Process()
                let pipe = Pipe()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = ["concurrency-worker", dir.path, "\(worker + 11)", "\(operations)"]
                process.standardOutput = pipe
                try process.run()
                return (process, pipe)
            }
            var latencies: [UInt64] = []
            var processSeconds = 0.0
            for (process, pipe) in children {
                let output = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { fatalError("process worker failed") }
                // Each child times its own loop (process start-up is not the cache's cost); the
                // slower child's time is the wall time of the pair.
                for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                    if line.hasPrefix("elapsed ") {
                        processSeconds = max(processSeconds, Double(line.dropFirst(8))! / 1e9)
                    } else if let latency = UInt64(line) {
                        latencies.append(latency)
                    }
                }
            }
            latencies.sort()
            results.append(
                Result(
                    label: "2-processes", operations: latencies.count, seconds: processSeconds,
                    p99: Self.percentile(latencies, 0.99), p50: Self.percentile(latencies, 0.5)))
            return results
        }
    }
}

/// Latencies gathered from several threads.
final class LockedLatencies: @unchecked Sendable {
    // @unchecked: `values` is only touched under `lock`.
    private let lock = NSLock()
    private var values: [UInt64] = []
    func append(_ more: [UInt64]) { lock.withLock { values += more } }
    var sorted: [UInt64] { lock.withLock { values.sorted() } }
}
