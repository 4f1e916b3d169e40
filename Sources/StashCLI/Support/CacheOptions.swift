#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// The options every command that opens a cache shares: `--dir`, `--size-limit`, `--eviction`,
    /// `--json`.
    struct CacheOptions: ParsableArguments {
        @Option(
            name: .customLong("dir"),
            help: ArgumentHelp(
                "The cache directory (default: $XDG_CACHE_HOME/stash, else ~/.cache/stash).", valueName: "path"))
        var directoryPath: String?

        @Option(
            name: .customLong("size-limit"),
            help: ArgumentHelp(
                "The most bytes of unpinned values, such as 500KB, 10MB, 1.5GB or 64MiB; remembered for the directory (default: the remembered limit, else 150MB).",
                valueName: "size"))
        var sizeLimitText: String?

        @Option(
            name: .customLong("eviction"),
            help: ArgumentHelp(
                "The eviction policy: adaptive, tinylfu, tinylfu-bytes, s3-fifo, sieve, lru or fifo (default: the one the directory's cache uses, else adaptive). Changing it resets the entries' eviction state once.",
                valueName: "policy"))
        var evictionPolicyName: String?

        @Flag(name: .customLong("json"), help: "Print machine-readable JSON instead of text.")
        var json = false

        mutating func validate() throws {
            _ = try Self.parseSize(sizeLimitText, option: "--size-limit")
            if let evictionPolicyName, EvictionPolicy(name: evictionPolicyName) == nil {
                throw ValidationError(
                    "Unknown eviction policy '\(evictionPolicyName)' for --eviction: use one of "
                        + EvictionPolicy.all.map(\.description).joined(separator: ", ") + ".")
            }
        }

        /// The `--eviction` policy given, if any.
        var evictionPolicy: EvictionPolicy? { evictionPolicyName.flatMap { EvictionPolicy(name: $0) } }

        /// The directory to use.
        var directory: URL {
            guard let directoryPath else { return .caches("stash") }
            return URL(fileURLWithPath: directoryPath, isDirectory: true).standardizedFileURL
        }

        /// The `--size-limit` given, if any.
        var sizeLimit: ByteCount? {
            // Validated in validate(), so this cannot throw here.
            try? Self.parseSize(sizeLimitText, option: "--size-limit")
        }

        /// Parses a positive size, throwing the one-line usage error that names `option`.
        static func parseSize(_ text: String?, option: String) throws -> ByteCount? {
            guard let text else { return nil }
            let size: ByteCount
            do {
                size = try ByteCount(parsing: text)
            } catch {
                throw ValidationError(
                    "Invalid size '\(text)' for \(option): write a number followed by a unit, such as 500KB, 10MB, 1.5GB or 64MiB."
                )
            }
            guard size.bytes > 0 else {
                throw ValidationError(
                    "Invalid size '\(text)' for \(option): it must be more than 0 bytes, such as 10MB.")
            }
            return size
        }

        /// Opens the cache, runs `body` with it, and closes it (recording accesses and statistics)
        /// whatever `body` does.
        ///
        /// - Parameter inspecting: `true` for commands that only read (`info`, `ls`, `get`,
        ///   `verify`): a missing directory is an error instead of being created.
        func withSession<T>(inspecting: Bool = false, _ body: (CacheSession) async throws -> T) async throws -> T {
            let session = try CacheSession(options: self, mustExist: inspecting)
            do {
                let result = try await body(session)
                try session.close()
                return result
            } catch {
                // The command's own error is the one to report; a failure to close is secondary.
                try? session.close()
                throw error
            }
        }
    }
#endif
