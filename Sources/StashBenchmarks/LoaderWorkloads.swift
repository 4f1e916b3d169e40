import Foundation
import Stash
import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers every request with one cacheable body: fills the cache once, before the timed reads.
private struct FixedTransport: HTTPTransport {
    let body: Data

    func send(
        _ request: URLRequest, onResponse: @escaping @Sendable (HTTPURLResponse) throws -> Void,
        onData: @escaping @Sendable (Data) throws -> Void
    ) async throws -> HTTPURLResponse {
        let response = HTTPURLResponse(
            url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Cache-Control": "max-age=86400", "Content-Length": "\(body.count)", "ETag": "\"v1\""])!
        try onResponse(response)
        try onData(body)
        return response
    }
}

/// `loader-disk-hit`: `ResourceLoader.data(for:)` on entries only the disk tier holds (the loader's
/// memory tier off), 200 URLs read round-robin; beside it, the disk reads it is made of: the
/// attributes and then the bytes (two index reads), and one `entry(forKey:)` read.
func loaderDiskHit(runs: Int, sizes: [Int]) async throws {
    print("| workload | size | median | min–max |")
    print("|---|---:|---:|---:|")
    for size in sizes {
        let base = scratchParent ?? FileManager.default.temporaryDirectory
        let directory = base.appendingPathComponent("stash-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory, configuration: .init(sizeLimit: .megabytes(500)))
        var configuration = ResourceLoader.Configuration()
        configuration.memoryCostLimit = .bytes(0)
        let loader = ResourceLoader(
            cache: cache, transport: FixedTransport(body: Data(ValueBytes.value(size))),
            configuration: configuration)
        let urls = (0..<200).map { URL(string: "http://bench.invalid/\($0)")! }
        for url in urls { _ = try await loader.data(for: ResourceRequest(url)) }
        try await cache.flush()
        let keys = urls.map(\.absoluteString)
        let passes = 10
        func time(_ body: () async throws -> Void) async rethrows -> [Double] {
            var samples: [Double] = []
            for _ in 0..<runs {
                let start = ContinuousClock.now
                for _ in 0..<passes { try await body() }
                let elapsed = ContinuousClock.now - start
                samples.append(Double(elapsed.components.attoseconds) / 1e9 + Double(elapsed.components.seconds) * 1e9)
            }
            return samples.map { $0 / Double(passes * urls.count) }
        }
        let loaderHit = try await time { for url in urls { _ = try await loader.data(for: ResourceRequest(url)) } }
        let twoReads = try await time {
            for key in keys {
                _ = try await cache.attributes(forKey: key)
                _ = try await cache.data(forKey: key)
            }
        }
        let oneRead = try await time { for key in keys { _ = try await cache.attributesAndData(forKey: key) } }
        for (name, samples) in [
            ("loader data(for:) disk hit", loaderHit), ("attributes + data (two reads)", twoReads),
            ("entry + data (one read)", oneRead),
        ] {
            let sorted = samples.sorted()
            let median = sorted[sorted.count / 2]
            print(
                "| \(name) | \(size / 1024) KiB | \(formatNanoseconds(median)) | "
                    + "\(formatNanoseconds(sorted.first!))–\(formatNanoseconds(sorted.last!)) |")
        }
    }
}
