import Foundation
import Stash

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension ResourceLoader {
    /// The partial downloads (bodies that stopped midway, kept to be resumed) in `cache`'s
    /// directory: how many, and their bytes.
    ///
    /// - Complexity: O(*p*) for *p* files in the `downloads/` folder.
    public static func partialDownloads(in cache: DiskCache) -> (count: Int, size: ByteCount) {
        let partials = PartialDownload.list(in: downloadsDirectory(of: cache))
        return (partials.count, .bytes(partials.reduce(0) { $0 + $1.size }))
    }

    /// Removes the partial downloads in `cache`'s directory that no transfer is writing, as
    /// `stash clear` and `stash trim` do; the next load of their URLs starts from the first byte.
    ///
    /// - Returns: How many were removed, and their bytes.
    /// - Complexity: O(*p*) for *p* files in the `downloads/` folder.
    @discardableResult
    public static func removePartialDownloads(in cache: DiskCache) -> (count: Int, size: ByteCount) {
        var (count, size) = (0, 0)
        for partial in PartialDownload.list(in: downloadsDirectory(of: cache)) where partial.remove() {
            count += 1
            size += partial.size
        }
        return (count, .bytes(size))
    }

    static func downloadsDirectory(of cache: DiskCache) -> String {
        cache.directory.appendingPathComponent("downloads", isDirectory: true).path
    }

    /// Keeps the partial downloads within the disk cache's byte limit after one was kept: the
    /// oldest go while they take more than half of it, then the cache evicts entries until it
    /// and the partials fit the limit together.
    func accountForPartialDownloads() async {
        let limit = cache.configuration.sizeLimit.bytes
        var partials = PartialDownload.list(in: downloadsDirectory).sorted { $0.modified < $1.modified }
        var total = partials.reduce(0) { $0 + $1.size }
        while total > limit / 2, !partials.isEmpty {
            let oldest = partials.removeFirst()
            if oldest.remove() { total -= oldest.size }
        }
        do {
            let cache = self.cache
            let room = max(0, limit - total)
            if try cache.totalSize.bytes > room { try await offload { try cache.trim(toSize: .bytes(room)) } }
        } catch {
            // Tolerated: the partials stay; the cache's own limit still holds for its entries.
            logger.warning("Cannot make room for partial downloads", metadata: ["error": "\(error)"])
        }
    }
}

extension PartialDownload {
    /// One partial's data file, as listed.
    struct Listed {
        var path: String
        var size: Int
        var modified: TimeInterval

        /// Removes it and its record unless a transfer holds it.
        ///
        /// - Returns: Whether it was removed.
        func remove() -> Bool {
            guard let file = try? DownloadFile.openPartial(at: path, truncating: false) else { return false }
            unlink(path + ".json")
            file.remove()
            return true
        }
    }

    /// The partials' data files in `directory`.
    static func list(in directory: String) -> [Listed] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasSuffix(".partial") }.compactMap { name in
            let path = directory + "/" + name
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            #if canImport(Darwin)
                let modified = TimeInterval(info.st_mtimespec.tv_sec)
            #else
                let modified = TimeInterval(info.st_mtim.tv_sec)
            #endif
            return Listed(path: path, size: Int(info.st_size), modified: modified)
        }
    }
}
