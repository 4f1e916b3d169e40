import Foundation
import Stash

/// `StashBenchmarks replay TRACE.csv …`: miss ratios of policies on a trace, at several cache
/// sizes and low-water marks, simulated and/or end to end, as a table or JSON lines; with
/// `--mode memory`, through a real MemoryCache (no low-water mark: it evicts what a write needs).
struct ReplayCommand {
    var trace: String

    /// `--write-mode immediate|write-behind`: how the end-to-end replay's DiskCache commits
    /// (default: write-behind, the cache's default).
    private var writeMode: DiskCache.WriteMode {
        switch option("--write-mode") ?? "write-behind" {
        case "write-behind": .writeBehind
        case "immediate": .immediate
        case let other: fail("unknown --write-mode \(other) (immediate or write-behind)")
        }
    }

    func run() throws {
        let loadStart = now()
        let requests = try TraceReplay.load(trace, limit: option("--limit").flatMap(Int.init))
        let loadSeconds = Double(now() - loadStart) / 1e9
        let workingSet = TraceReplay.workingSet(requests)
        let sizes = try (option("--cache-size") ?? "5%").split(separator: ",").map { text in
            if text.hasSuffix("%"), let percent = Double(text.dropLast()) {
                return (label: String(text), bytes: Int(Double(workingSet) * percent / 100))
            }
            return (label: String(text), bytes: try ByteCount(parsing: String(text)).bytes)
        }
        let policyNames = option("--policy") ?? "all"
        let mode = option("--mode") ?? "simulate"
        guard ["simulate", "disk", "both", "memory"].contains(mode) else { fail("unknown mode \(mode)") }
        if mode == "memory" {
            try runMemory(requests, sizes: sizes, policyNames: policyNames)
            return
        }
        let policies =
            policyNames == "all"
            ? EvictionPolicy.all
            : policyNames.split(separator: ",").map { name in
                guard let policy = EvictionPolicy(name: String(name)) else { fail("unknown policy \(name)") }
                return policy
            }
        let lowWaterMarks = (option("--low-water-mark") ?? "0.9").split(separator: ",").map { text in
            guard let mark = Double(text), mark > 0, mark <= 1 else { fail("bad --low-water-mark \(text)") }
            return mark
        }
        let name = URL(fileURLWithPath: trace).lastPathComponent
        if !json {
            print(
                "trace \(name): \(requests.count) requests, working set \(ByteCount(workingSet)), "
                    + "loaded in \(String(format: "%.2f", loadSeconds)) s")
            print("| cache | low-water mark | policy | mode | object miss ratio | byte miss ratio | seconds |")
            print("|---|---:|---|---|---:|---:|---:|")
        }
        for size in sizes {
            for lowWaterMark in lowWaterMarks {
                for policy in policies {
                    try replay(
                        requests, policy: policy, size: size, lowWaterMark: lowWaterMark, mode: mode, trace: name)
                }
            }
        }
    }

    /// `--mode memory`: every size × policy through a MemoryCache.
    private func runMemory(_ requests: [TraceReplay.Request], sizes: [(label: String, bytes: Int)], policyNames: String)
        throws
    {
        let policies =
            policyNames == "all"
            ? TraceReplay.memoryPolicies
            : policyNames.split(separator: ",").map { name in
                guard let policy = TraceReplay.memoryPolicies.first(where: { "\($0)" == name }) else {
                    fail("unknown memory policy \(name)")
                }
                return policy
            }
        let name = URL(fileURLWithPath: trace).lastPathComponent
        if !json {
            print("| cache | policy | mode | object miss ratio | byte miss ratio | seconds |")
            print("|---|---|---|---:|---:|---:|")
        }
        for size in sizes {
            for policy in policies {
                let outcome = TraceReplay.memory(requests, policy: policy, cacheBytes: size.bytes)
                if json {
                    print(outcome.jsonLine(trace: name, cacheLabel: size.label, lowWaterMark: 1))
                } else {
                    print(
                        "| \(size.label) | \(policy) | memory | \(String(format: "%.4f", outcome.objectMissRatio)) | "
                            + "\(String(format: "%.4f", outcome.byteMissRatio)) | "
                            + "\(String(format: "%.2f", outcome.seconds)) |")
                }
            }
        }
    }

    private func replay(
        _ requests: [TraceReplay.Request], policy: EvictionPolicy, size: (label: String, bytes: Int),
        lowWaterMark: Double, mode: String, trace: String
    ) throws {
        var outcomes: [TraceReplay.Outcome] = []
        if mode == "simulate" || mode == "both" {
            outcomes.append(
                try TraceReplay.simulate(
                    requests, policy: policy, cacheBytes: size.bytes, lowWaterMark: lowWaterMark,
                    keepHits: mode == "both"))
        }
        if mode == "disk" || mode == "both" {
            outcomes.append(
                try TraceReplay.endToEnd(
                    requests, policy: policy, cacheBytes: size.bytes, lowWaterMark: lowWaterMark, writeMode: writeMode))
        }
        for outcome in outcomes {
            if json {
                print(outcome.jsonLine(trace: trace, cacheLabel: size.label, lowWaterMark: lowWaterMark))
            } else {
                print(
                    "| \(size.label) | \(lowWaterMark) | \(policy) | \(outcome.mode) | "
                        + "\(String(format: "%.4f", outcome.objectMissRatio)) | "
                        + "\(String(format: "%.4f", outcome.byteMissRatio)) | "
                        + "\(String(format: "%.2f", outcome.seconds)) |")
            }
        }
        if outcomes.count == 2 {
            let disagreements = zip(outcomes[0].hits, outcomes[1].hits).filter { $0 != $1 }.count
            let line =
                "\(policy) at \(size.label): simulated and end-to-end replays disagree on \(disagreements) of "
                + "\(requests.count) requests"
            if json { log(line) } else { print(line) }
            if disagreements > 0 { exit(1) }
        }
    }
}
