import Foundation
import Stash

// Shared by the benchmark executable and, through a symbolic link, the PostgreSQL test
// worker (Tests/StashPostgresTestWorker/MemorySampling.swift): the resident-memory sampling
// and file helpers of a large body's round trip.

/// A field of /proc/self/status in KiB, or 0 off Linux.
func residentKB(_ field: String) -> Int {
    #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
    #endif
    return 0
}

/// The largest VmRSS sampled so far.
let memorySamples = MemorySamples()

final class MemorySamples: @unchecked Sendable {  // @unchecked: every access holds `lock`
    private let lock = NSLock()
    private var peak = 0
    private var count = 0

    func sample() {
        let now = residentKB("VmRSS")
        lock.withLock {
            peak = max(peak, now)
            count += 1
        }
    }

    var value: (peak: Int, samples: Int) { lock.withLock { (peak, count) } }
}

/// Samples the resident set on every chunk `base` yields.
struct SampledBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    let base: Base
    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        mutating func next() async throws -> Data? {
            let chunk = try await base.next()
            memorySamples.sample()
            return chunk
        }
    }
}

/// Writes the body it receives to a file, sampling the resident set on every chunk.
final class SamplingFileSink: SharedBodySink, @unchecked Sendable {  // @unchecked: called one call at a time
    private let handle: FileHandle

    init(_ url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try FileHandle(forWritingTo: url)
    }

    deinit { try? handle.close() }

    func begin(_ head: SharedEntryHead) async throws -> Bool { true }

    func append(_ chunk: Data) async throws {
        try handle.write(contentsOf: chunk)
        memorySamples.sample()
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

/// The checksum and length of a file, read 1 MiB at a time.
func fileChecksum(_ url: URL) async throws -> (checksum: UInt64, size: Int) {
    var checksum = SharedBodyChecksum()
    var size = 0
    for try await chunk in try SharedFileBody(fileAt: url) {
        checksum.update(chunk)
        size += chunk.count
    }
    return (checksum.value, size)
}
