import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A body that stopped midway (a lost connection, a killed process), kept in the loader's
/// `downloads/` directory to be resumed with `Range` + `If-Range` by a later load of the same
/// cache key, in this process or a later one.
///
/// Two files per key, named by a hash of the key: `<hash>.partial` holds the bytes received so
/// far (its length is the resume offset: appends are sequential, so whatever reached the file
/// is a prefix of the body), `<hash>.partial.json` the ``Record`` written before the first
/// byte. The data file is `flock`ed by the transfer writing it, so two processes never append
/// to one partial. A partial is never served: only a complete body reaches the disk cache.
enum PartialDownload {
    /// What a resumed request must match.
    struct Record: Codable, Hashable, Sendable {
        var key: String
        var url: String
        var etag: String?
        var lastModified: String?
        /// The complete body's length.
        var length: Int
    }

    /// A partial found for a key, its data file open, locked and positioned at its end.
    struct Found {
        var record: Record
        var file: DownloadFile
        var size: Int

        /// The validator for `If-Range`: a strong ETag, else `Last-Modified` (RFC 9110 §13.1.5
        /// forbids weak ETags there).
        var ifRange: String? {
            if let etag = record.etag, !etag.hasPrefix("W/") { return etag }
            return record.lastModified
        }
    }

    /// Partials untouched for this long are removed by a loader starting up.
    static let lifetime: TimeInterval = 7 * 86_400

    static func dataPath(in directory: String, key: String) -> String {
        directory + "/" + name(for: key) + ".partial"
    }

    static func recordPath(in directory: String, key: String) -> String {
        dataPath(in: directory, key: key) + ".json"
    }

    /// Whether `name` is a partial's data or record file.
    static func isPartial(_ name: String) -> Bool {
        name.hasSuffix(".partial") || name.hasSuffix(".partial.json")
    }

    /// The partial of `key` that a request can resume.
    ///
    /// `nil` when there is none, it has no validator or no bytes, or another transfer holds it.
    /// A record that does not describe the key (garbage, or a hash collision) is not used.
    static func find(in directory: String, key: String) -> Found? {
        guard let data = FileManager.default.contents(atPath: recordPath(in: directory, key: key)),
            let record = try? JSONDecoder().decode(Record.self, from: data), record.key == key,
            record.etag != nil || record.lastModified != nil
        else { return nil }
        guard let file = try? DownloadFile.openPartial(at: dataPath(in: directory, key: key), truncating: false)
        else { return nil }
        let size = file.size
        guard size > 0, size < record.length else {
            file.remove()
            try? FileManager.default.removeItem(atPath: recordPath(in: directory, key: key))
            return nil
        }
        let found = Found(record: record, file: file, size: size)
        return found.ifRange == nil ? nil : found
    }

    /// Starts the partial of `key` for a response with validators and a known length: its data
    /// file, empty and locked, and its record.
    ///
    /// - Returns: `nil` when another transfer holds the key's partial.
    /// - Throws: When the files cannot be written.
    static func start(in directory: String, record: Record) throws -> DownloadFile? {
        guard let file = try DownloadFile.openPartial(at: dataPath(in: directory, key: record.key), truncating: true)
        else { return nil }
        try JSONEncoder().encode(record).write(to: URL(fileURLWithPath: recordPath(in: directory, key: record.key)))
        return file
    }

    /// The record of a partial that `response` (a 200 with a known length) would start, or `nil`
    /// when it has no validator to resume with.
    static func record(for response: HTTPURLResponse, key: String, url: URL, length: Int) -> Record? {
        let etag = response.value(forHTTPHeaderField: "ETag")
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        let strongETag = etag.flatMap { $0.hasPrefix("W/") ? nil : $0 }
        guard strongETag != nil || lastModified != nil else { return nil }
        return Record(key: key, url: url.absoluteString, etag: etag, lastModified: lastModified, length: length)
    }

    /// Removes the record of `key`'s partial (its data file is removed or moved by its owner).
    static func removeRecord(in directory: String, key: String) {
        unlink(recordPath(in: directory, key: key))
    }

    /// `bytes N-M/T` of a `Content-Range` header.
    static func contentRange(_ header: String?) -> (start: Int, total: Int)? {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/")
        guard parts.count == 2, let total = Int(parts[1].trimmingCharacters(in: .whitespaces)),
            let start = parts[0].split(separator: "-").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        return (start, total)
    }

    /// 32 hex digits from two FNV-1a hashes of the key: keys never become paths.
    private static func name(for key: String) -> String {
        func fnv(_ basis: UInt64) -> UInt64 {
            var hash = basis
            for byte in key.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            return hash
        }
        let first = String(fnv(0xcbf2_9ce4_8422_2325), radix: 16)
        let second = String(fnv(0x84_2225_cbf2_9ce4), radix: 16)
        return String(repeating: "0", count: 16 - first.count) + first
            + String(repeating: "0", count: 16 - second.count) + second
    }
}
