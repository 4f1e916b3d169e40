#if Tool
    import Foundation
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// What the `stash` tool remembers about one cache directory, in `stash-tool.json` beside the
    /// index: the size limit it was last given, and counters of the reads it made.
    ///
    /// `DiskCache` keeps statistics per open object only; these counters add up every `stash`
    /// invocation on the directory (not the reads of programs using the library). The file is
    /// replaced atomically (write, then rename) under an exclusive `flock` on `stash-tool.lock`, so
    /// concurrent `stash` processes never lose an update or read a torn file.
    struct ToolState: Codable, Equatable {
        /// The name of the file in the cache directory.
        static let fileName = "stash-tool.json"
        private static let lockName = "stash-tool.lock"

        /// The size limit last given with `--size-limit`, in bytes.
        var sizeLimit: Int?
        /// Counters of the tool's reads and writes.
        var statistics = ToolStatistics()

        /// The state stored in `directory`, or a fresh one when there is none yet.
        ///
        /// - Throws: ``CLIError`` when the file exists but cannot be read or decoded.
        static func load(from directory: URL) throws -> ToolState {
            let url = directory.appendingPathComponent(fileName)
            guard FileManager.default.fileExists(atPath: url.path) else { return ToolState() }
            do {
                return try JSONDecoder().decode(ToolState.self, from: Data(contentsOf: url))
            } catch {
                throw CLIError.io(
                    "Cannot read \(url.path) (\(error.localizedDescription)): remove the file to reset the remembered size limit and statistics."
                )
            }
        }

        /// Applies `change` to the stored state, atomically with respect to other `stash` processes.
        ///
        /// - Throws: ``CLIError`` when the state cannot be read or written.
        @discardableResult
        static func update(in directory: URL, _ change: (inout ToolState) -> Void) throws -> ToolState {
            let lockPath = directory.appendingPathComponent(lockName).path
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw CLIError.io(
                    "Cannot open \(lockPath) (\(String(cString: strerror(errno)))): check the directory's permissions.")
            }
            defer { close(descriptor) }
            while flock(descriptor, LOCK_EX) != 0 {
                guard errno == EINTR else {
                    throw CLIError.io("Cannot lock \(lockPath) (\(String(cString: strerror(errno)))).")
                }
            }
            var state = try load(from: directory)
            let original = state
            change(&state)
            guard state != original else { return state }
            let url = directory.appendingPathComponent(fileName)
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try encoder.encode(state).write(to: url, options: .atomic)
            } catch {
                throw CLIError.io(
                    "Cannot write \(url.path) (\(error.localizedDescription)): check the directory's permissions.")
            }
            return state
        }
    }
#endif
