import Foundation

/// A measured cell: nanoseconds per operation over several timed runs.
struct Measurement {
    var workload: String
    var valueSize: Int
    var ops: Int
    var runs: [Double]
    var policy = "lru"
    var extra: [String: String] = [:]

    var median: Double { runs.sorted()[runs.count / 2] }
    var minimum: Double { runs.min() ?? 0 }
    var maximum: Double { runs.max() ?? 0 }

    /// The JSON line of the shared contract (see Benchmarks/README.md).
    var jsonLine: String {
        var fields = [
            "\"impl\": \"stash\"", "\"policy\": \"\(policy)\"", "\"workload\": \"\(workload)\"",
            "\"value_size\": \(valueSize)", "\"ops\": \(ops)", "\"median_ns_per_op\": \(Int(median))",
            "\"min_ns_per_op\": \(Int(minimum))", "\"max_ns_per_op\": \(Int(maximum))", "\"runs\": \(runs.count)",
        ]
        for (key, value) in extra.sorted(by: { $0.key < $1.key }) { fields.append("\"\(key)\": \(value)") }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}

/// Monotonic nanoseconds.
@inline(__always) func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Runs `body` once to warm up and `runs` times timed; `body` returns the nanoseconds it
/// measured itself (so that set-up inside a run stays untimed).
func measure(runs: Int, _ body: () throws -> UInt64) rethrows -> [Double] {
    _ = try body()
    return try (0..<runs).map { _ in Double(try body()) }
}

/// Where scratch caches go (`--dir`); the system's temporary directory by default.
///
/// Set once at start-up, before any benchmark runs.
nonisolated(unsafe) var scratchParent: URL?

/// A fresh temporary directory, removed afterwards.
func withScratchDirectory<T>(_ body: (URL) throws -> T) rethrows -> T {
    let base = scratchParent ?? FileManager.default.temporaryDirectory
    let url = base.appendingPathComponent("stash-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// The value bytes every implementation stores: splitmix64 words for state
/// 0x5354415348 + (k + 1) * golden, little-endian (the contract in Benchmarks/README.md).
enum ValueBytes {
    static let stream: Data = {
        let count = 2 * 1024 * 1024
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for k in 0..<(count / 8) {
                var z = 0x53_5441_5348 &+ UInt64(k + 1) &* 0x9E37_79B9_7F4A_7C15
                z ^= z >> 30
                z &*= 0xBF58_476D_1CE4_E5B9
                z ^= z >> 27
                z &*= 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                buffer.storeBytes(of: z.littleEndian, toByteOffset: k * 8, as: UInt64.self)
            }
        }
        let expected: [UInt8] = [
            0x3D, 0x37, 0xC2, 0xC8, 0x65, 0xC3, 0x1E, 0xC4, 0x3F, 0x6B, 0x6E, 0x42, 0x45, 0x66, 0x63, 0xAF,
        ]
        precondition(Array(data.prefix(16)) == expected, "value stream does not match the shared test vector")
        return data
    }()

    static func value(_ size: Int) -> Data { stream.prefix(size) }
}

func key(_ i: Int) -> String { String(format: "key-%08d", i) }
func absentKey(_ i: Int) -> String { String(format: "absent-%08d", i) }

/// Formats nanoseconds per operation for the human table.
func formatNanoseconds(_ ns: Double) -> String {
    if ns >= 1_000_000 { return String(format: "%.2f ms", ns / 1e6) }
    if ns >= 1000 { return String(format: "%.1f µs", ns / 1e3) }
    return String(format: "%.0f ns", ns)
}

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
