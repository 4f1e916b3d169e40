#if Benchmarks
    // The transport benchmark: 300 downloads of 20 KiB to 2 MiB from a loopback origin, 4 transfers at
    // a time, through a ResourceLoader into a fresh DiskCache, with URLSessionTransport and with
    // AsyncHTTPClientTransport. Build in release mode:
    //
    //   swift build -c release --traits Benchmarks --product StashTransportBenchmarks
    //   .build/release/StashTransportBenchmarks [--rounds 3] [--downloads 300] [--concurrency 4] [--json]
    //
    // The origin (FlyingFox on 127.0.0.1) runs in this process; each measured run is a child process
    // (`client TRANSPORT URL …`) so that its peak resident memory is the client's alone. Rounds
    // alternate the transports, so that load from other work on the machine falls on both alike.
    import Foundation

    let arguments = Array(CommandLine.arguments.dropFirst())

    func option(_ name: String) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("StashTransportBenchmarks: \(message)\n".utf8))
        exit(64)
    }

    let downloads = option("--downloads").flatMap(Int.init) ?? 300
    let concurrency = option("--concurrency").flatMap(Int.init) ?? 4

    do {
        if arguments.first == "client" {
            guard arguments.count >= 3, let transport = ClientRun.Transport(rawValue: arguments[1]) else {
                fail("usage: client urlsession|async-http-client ORIGIN-URL [--downloads N] [--concurrency N]")
            }
            let run = ClientRun(
                transport: transport, origin: arguments[2],
                sizes: Workload.sizes(count: downloads), concurrency: concurrency)
            print(try await run.measure().jsonLine)
        } else {
            let rounds = option("--rounds").flatMap(Int.init) ?? 3
            try await Comparison(rounds: rounds, downloads: downloads, concurrency: concurrency)
                .run(json: arguments.contains("--json"))
        }
    } catch {
        fail("\(error)")
    }
#else
    import Foundation

    FileHandle.standardError.write(
        Data(
            "StashTransportBenchmarks was built without the Benchmarks trait: build it with `swift build --traits Benchmarks` (or --enable-all-traits).\n"
                .utf8))
    exit(2)
#endif
