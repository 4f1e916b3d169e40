import Foundation

extension DiskCache {
    /// The eviction policy that the cache in `directory` keeps its entries' state for, or `nil`
    /// when the directory holds no cache index or the index cannot be read.
    ///
    /// Opening a cache with another policy resets that state once (see
    /// ``Configuration/evictionPolicy``). A tool that inspects a cache owned by an application,
    /// such as `stash info`, opens it with this policy so that it leaves the application's
    /// eviction order alone.
    ///
    /// Creates nothing: a directory without an index stays as it is.
    ///
    /// - Complexity: O(1).
    public static func storedEvictionPolicy(in directory: URL) -> EvictionPolicy? {
        let path = DiskIndex.databasePath(inRoot: directory.standardizedFileURL.path)
        let busyTimeout = Configuration().busyTimeout
        guard FileManager.default.fileExists(atPath: path),
            let connection = try? SQLiteConnection(path: path, busyTimeout: busyTimeout, createsFile: false)
        else { return nil }
        defer { connection.close() }
        let name = try? connection.first("SELECT policy FROM totals WHERE id = 1") { $0.text(0) }
        return name.flatMap { $0 }.flatMap { EvictionPolicy(name: $0) }
    }
}
