#if Tool
    import Foundation

    /// Runs `body` with a new empty directory and removes it afterwards.
    func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "stash-cli-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }

    extension String {
        /// The text with `directory`'s path as `$DIR`, a local port as `$PORT`, and durations as
        /// `$TIME`, so that outputs can be compared whole.
        func normalized(directory: URL? = nil) -> String {
            var text = self
            if let directory { text = text.replacingOccurrences(of: directory.path, with: "$DIR") }
            text = text.replacingOccurrences(
                of: #"127\.0\.0\.1:\d+"#, with: "127.0.0.1:$PORT", options: .regularExpression)
            text = text.replacingOccurrences(of: #"\d+(\.\d+)? (ms|s)\b"#, with: "$TIME", options: .regularExpression)
            text = text.replacingOccurrences(
                of: #"data/[0-9a-f]+/[0-9a-f]+/[0-9a-f]+"#, with: "data/$FILE", options: .regularExpression)
            return text
        }
    }
#endif
