#if Benchmarks
    import Foundation
    import Logging
    import Stash
    import StashHTTP
    import StashPostgres

    // The shared tier's benchmarks, in their own executable so that the disk benchmarks stay free of
    // NIO. Needs a PostgreSQL server: run it through the project's script, in release mode:
    //
    //   scripts/postgres run -- swift run -c release --traits Benchmarks StashSharedBenchmarks [MODE]
    //
    // MODE: none (latency, throughput), `fleet` (3 processes, 300 photos), `large` (32 MiB streamed),
    // `access-cost` (what LRU costs per hit), or `trim TRACE.csv…` (FIFO vs LRU trim; no database needed).

    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = .warning
        return handler
    }

    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "trim" {
        // Needs no database: a model of the tier's batch trim, replayed on trace files.
        let fractions = [0.01, 0.05, 0.1]
        do {
            try TrimSimulation(traces: Array(arguments.dropFirst()), fractions: fractions).run()
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("StashSharedBenchmarks trim: \(error)\n".utf8))
            exit(1)
        }
    }

    guard let url = ProcessInfo.processInfo.environment["STASH_POSTGRES_URL"] else {
        FileHandle.standardError.write(
            Data(
                ("StashSharedBenchmarks needs PostgreSQL: run it as\n"
                    + "  scripts/postgres run -- swift run -c release --traits Benchmarks"
                    + " StashSharedBenchmarks [fleet]\n").utf8))
        exit(2)
    }

    do {
        switch arguments.first ?? "all" {
        case "all":
            try await LatencyBenchmark(url: url).run()
        case "fleet":
            let instances = arguments.count > 1 ? Int(arguments[1]) ?? 3 : 3
            let photos = arguments.count > 2 ? Int(arguments[2]) ?? 300 : 300
            try await FleetBenchmark(url: url, instances: instances, photos: photos).run()
        case "large":
            let mebibytes = arguments.count > 1 ? Int(arguments[1]) ?? 32 : 32
            let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
            try await LargeBodyBenchmark(url: url, size: mebibytes << 20, rounds: rounds).run()
        case "access-cost":
            let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 3 : 3
            try await AccessCostBenchmark(url: url, rounds: rounds).run()
        case "fleet-worker":
            try await FleetBenchmark.worker(Array(arguments.dropFirst()), url: url)
        default:
            FileHandle.standardError.write(
                Data(
                    ("usage: StashSharedBenchmarks [all | fleet [INSTANCES [PHOTOS]] | large [MIB [ROUNDS]] "
                        + "| access-cost [ROUNDS] | trim TRACE.csv…]\n").utf8))
            exit(2)
        }
    } catch {
        FileHandle.standardError.write(Data("StashSharedBenchmarks: \(error)\n".utf8))
        exit(1)
    }
#else
    import Foundation

    FileHandle.standardError.write(
        Data(
            "StashSharedBenchmarks was built without the Benchmarks trait: build it with `swift build --traits Benchmarks` (or --enable-all-traits).\n"
                .utf8))
    exit(2)
#endif
