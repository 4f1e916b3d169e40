#if Postgres
    import Foundation
    import Stash
    import StashPostgres

    // `stream URL TABLE SIZE DIR`: writes a SIZE-byte file in DIR, stores it with the streaming
    // store, reads it back with the streaming read into another file, and prints
    //   RESULT baselineKB=… peakKB=… hwmBeforeKB=… hwmAfterKB=… samples=… size=… match=… storeMs=… readMs=…
    // baselineKB is VmRSS after a warm-up round trip of a smaller body (connections open, buffers
    // allocated); peakKB the largest VmRSS sampled on every chunk stored and read; hwm*KB the
    // kernel's VmHWM (peak RSS) before and after the large round trip.

    func streamRoundTrip(url: String, table: String, size: Int, directory: String) async {
        do {
            let root = URL(fileURLWithPath: directory)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let tier = try await PostgresSharedTier(url: url, configuration: .init(table: table))
            let input = root.appendingPathComponent("body.in")
            let output = root.appendingPathComponent("body.out")
            // Warm-up: a 3 MiB round trip, so that the baseline includes open connections and buffers.
            try writeBody(input, size: 3 << 20, seed: 1)
            try await tier.store(SharedEntryHead(key: "warm-up", size: 3 << 20), bodyFromFileAt: input)
            _ = try await tier.streamEntry(forKey: "warm-up", into: try SamplingFileSink(output))
            try writeBody(input, size: size, seed: 2)

            let baseline = residentKB("VmRSS")
            let hwmBefore = residentKB("VmHWM")
            memorySamples.sample()
            let started = ContinuousClock.now
            try await tier.store(
                SharedEntryHead(key: "large", size: size), body: SampledBody(base: try SharedFileBody(fileAt: input)))
            let stored = ContinuousClock.now
            let head = try await tier.streamEntry(forKey: "large", into: try SamplingFileSink(output))
            let read = ContinuousClock.now
            let hwmAfter = residentKB("VmHWM")
            let (expected, _) = try await fileChecksum(input)
            let (actual, actualSize) = try await fileChecksum(output)
            let (peak, samples) = memorySamples.value
            func ms(_ duration: Duration) -> Int { Int(duration / .milliseconds(1)) }
            print(
                "RESULT baselineKB=\(baseline) peakKB=\(peak) hwmBeforeKB=\(hwmBefore) hwmAfterKB=\(hwmAfter) "
                    + "samples=\(samples) size=\(actualSize) head=\(head?.size ?? -1) match=\(expected == actual) "
                    + "damaged=\(tier.statistics.damagedBodies) storeMs=\(ms(stored - started)) readMs=\(ms(read - stored))"
            )
            tier.shutdown()
        } catch {
            FileHandle.standardError.write(Data("stream: \(error)\n".utf8))
            exit(1)
        }
    }
#endif
