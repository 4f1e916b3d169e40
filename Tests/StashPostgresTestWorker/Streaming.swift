import Foundation
import Stash
import StashPostgres

// `stream URL TABLE SIZE DIR`: writes a SIZE-byte file in DIR, stores it with the streaming
// store, reads it back with the streaming read into another file, and prints
//   RESULT baselineKB=… peakKB=… hwmBeforeKB=… hwmAfterKB=… samples=… size=… match=… storeMs=… readMs=…
// baselineKB is VmRSS after a warm-up round trip of a smaller body (connections open, buffers
// allocated); peakKB the largest VmRSS sampled on every chunk stored and read; hwm*KB the
// kernel's VmHWM (peak RSS) before and after the large round trip.

/// A field of /proc/self/status in KiB, or 0 off Linux.
func status(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
    return 0
}

/// The largest VmRSS seen so far.
let peakRSS = LockedPeak()

final class LockedPeak: @unchecked Sendable {  // @unchecked: every access holds `lock`
    private let lock = NSLock()
    private var peak = 0
    private var count = 0
    func sample() {
        let now = status("VmRSS")
        lock.withLock {
            peak = max(peak, now)
            count += 1
        }
    }
    var value: (peak: Int, samples: Int) { lock.withLock { (peak, count) } }
}

/// Samples the resident set on every chunk `base` yields.
struct Sampled<Base: AsyncSequence<Data, any Error> & Sendable>: AsyncSequence, Sendable {
    let base: Base
    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }
    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        mutating func next() async throws -> Data? {
            let chunk = try await base.next()
            peakRSS.sample()
            return chunk
        }
    }
}

/// Writes the body it receives to a file, sampling the resident set on every chunk.
final class FileSink: SharedBodySink, @unchecked Sendable {  // @unchecked: the tier calls it one call at a time
    let handle: FileHandle
    init(_ url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try FileHandle(forWritingTo: url)
    }
    func begin(_ head: SharedEntryHead) async throws -> Bool { true }
    func append(_ chunk: Data) async throws {
        try handle.write(contentsOf: chunk)
        peakRSS.sample()
    }
}

/// Writes `size` deterministic bytes to `url`, 1 MiB at a time.
func writeBody(_ url: URL, size: Int, seed: UInt64) throws {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var state = seed | 1
    var written = 0
    while written < size {
        let count = min(1 << 20, size - written)
        var piece = Data(count: (count + 7) & ~7)
        piece.withUnsafeMutableBytes { buffer in
            for index in 0..<buffer.count / 8 {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer.storeBytes(of: state, toByteOffset: index * 8, as: UInt64.self)
            }
        }
        try handle.write(contentsOf: piece.prefix(count))
        written += count
    }
}

/// The checksum of a file, read 1 MiB at a time.
func fileChecksum(_ url: URL) async throws -> (UInt64, Int) {
    var checksum = SharedBodyChecksum()
    var size = 0
    for try await chunk in try SharedFileBody(fileAt: url) {
        checksum.update(chunk)
        size += chunk.count
    }
    return (checksum.value, size)
}

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
        _ = try await tier.streamEntry(forKey: "warm-up", into: try FileSink(output))
        try writeBody(input, size: size, seed: 2)

        let baseline = status("VmRSS")
        let hwmBefore = status("VmHWM")
        peakRSS.sample()
        let started = ContinuousClock.now
        try await tier.store(
            SharedEntryHead(key: "large", size: size), body: Sampled(base: try SharedFileBody(fileAt: input)))
        let stored = ContinuousClock.now
        let head = try await tier.streamEntry(forKey: "large", into: try FileSink(output))
        let read = ContinuousClock.now
        let hwmAfter = status("VmHWM")
        let (expected, _) = try await fileChecksum(input)
        let (actual, actualSize) = try await fileChecksum(output)
        let (peak, samples) = peakRSS.value
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
