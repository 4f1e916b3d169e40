import Foundation
import Logging
import Stash

@testable import StashHTTP

/// A fresh directory under the system's temporary directory, removed when the body ends.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("stash-http-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// A clock that tests move by hand.
final class TestClock: Sendable {
    private let now = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
    var date: Date { now.withLock { $0 } }
    func advance(by seconds: Double) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { self.date } }
}

/// A disk cache and a loader over it, with their events recorded.
struct Fixture {
    let directory: URL
    let cache: DiskCache
    let loader: ResourceLoader
    let events: EventLog

    /// Opens the cache in `directory` (100 MB, default 32 KiB inline threshold) and a loader
    /// with no retries unless `configure` says otherwise.
    init(
        directory: URL, sizeLimit: ByteCount = .megabytes(100),
        configure: (inout ResourceLoader.Configuration) -> Void = { _ in }
    ) throws {
        self.directory = directory
        cache = try DiskCache(directory: directory, sizeLimit: sizeLimit)
        let events = EventLog()
        self.events = events
        var configuration = ResourceLoader.Configuration(retryPolicy: .none)
        configure(&configuration)
        let forward = configuration.onEvent
        configuration.onEvent = { event in
            events.handler(event)
            forward?(event)
        }
        loader = ResourceLoader(
            cache: cache, configuration: configuration, logger: Logger(label: "stash.http.tests"))
    }

    /// Files in the loader's `downloads/` directory.
    var downloads: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("downloads").path))
            ?? []
    }

    /// Files in `downloads/` other than partial downloads (kept to be resumed).
    var transientDownloads: [String] {
        downloads.filter { !$0.hasSuffix(".partial") && !$0.hasSuffix(".partial.json") }
    }

    /// The sizes of the partial downloads' data files, smallest first.
    var partialSizes: [Int] {
        downloads.filter { $0.hasSuffix(".partial") }.compactMap { name in
            let path = directory.appendingPathComponent("downloads").appendingPathComponent(name).path
            return (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
        }.sorted()
    }
}

/// The error thrown by `body`, or `nil`.
func error<T>(of body: () async throws -> T) async -> StashError? {
    do {
        _ = try await body()
        return nil
    } catch let error as StashError {
        return error
    } catch {
        return StashError(.io, "unexpected error type: \(error)")
    }
}
