// A tour of DiskCache with no network: fill a 10 MB cache with generated "photos", watch it
// evict, relaunch it, and verify it. `make demo` runs this until the `stash demo` command exists.
import Foundation
import Stash

func photo(_ index: Int) -> Data {
    // Sizes from 20 KB to 600 KB, deterministic per photo.
    let size = 20_000 + (index * 7919) % 580_000
    var data = Data(count: size)
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        var state = UInt64(index + 1) &* 0x9E37_79B9_7F4A_7C15
        for i in 0..<buffer.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            buffer[i] = UInt8(truncatingIfNeeded: state)
        }
    }
    return data
}

func milliseconds(since start: ContinuousClock.Instant) -> String {
    let elapsed = ContinuousClock.now - start
    return String(format: "%.1f ms", Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-example-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }

do {
    let evicted = LockedCounter()
    var configuration = DiskCache.Configuration(sizeLimit: .megabytes(10))
    configuration.onEviction = { _ in evicted.increment() }

    print("1. Store 120 photos (20 KB-600 KB) into a cache limited to 10 MB at \(directory.path)")
    var start = ContinuousClock.now
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration)
        for index in 0..<120 { try cache.store(photo(index), forKey: "https://example.com/photos/\(index).jpg") }
        print("   stored in \(milliseconds(since: start)); \(evicted.value) evicted on the way")
        print("   totals: \(try cache.totalCount) entries, \(try cache.totalSize) (limit \(configuration.sizeLimit))")
        try cache.store(Data("my notes".utf8), forKey: "notes.txt", pinned: true)
        _ = try cache.data(forKey: "https://example.com/photos/100.jpg")
        cache.close()
    }

    print("2. Relaunch: open the same directory again")
    start = ContinuousClock.now
    let cache = try DiskCache(directory: directory, configuration: configuration)
    let firstHit = try cache.data(forKey: "https://example.com/photos/100.jpg")
    print("   opened and served a \(ByteCount(firstHit?.count ?? 0)) photo in \(milliseconds(since: start))")
    var hits = 0
    for index in 0..<120 where try cache.data(forKey: "https://example.com/photos/\(index).jpg") != nil { hits += 1 }
    print("   \(hits) of 120 photos still cached; pinned notes: \(try cache.data(forKey: "notes.txt").map { String(decoding: $0, as: UTF8.self) } ?? "missing")")
    if let url = try cache.fileURL(forKey: "https://example.com/photos/119.jpg") {
        print("   a file URL to hand to a viewer: \(url.path)")
    }

    print("3. Verify every byte")
    let report = try cache.verify()
    print(report.description.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n"))
    let stats = cache.statistics
    print("   statistics: \(stats.hits) hits, \(stats.misses) misses, hit ratio \(String(format: "%.0f%%", stats.hitRatio * 100))")
} catch {
    print("example failed: \(error)")
    exit(1)
}

final class LockedCounter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
