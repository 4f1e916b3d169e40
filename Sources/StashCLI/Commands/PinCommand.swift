#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash pin KEY`: exempts an entry from eviction.
    struct PinCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin",
            abstract: "Pin an entry: it is never evicted or expired until unpinned.",
            discussion:
                "Pinned entries do not count against the size limit. Exits with status 1 when the key is not cached."
        )

        @Argument(help: "The key, exactly as stored.")
        var key: String

        @OptionGroup var options: CacheOptions

        func run() async throws {
            try await PinCommand.setPinned(true, key: key, options: options)
        }

        /// What `--json` prints, for `pin` and `unpin`.
        struct Report: Encodable {
            var key: String
            var pinned: Bool
        }

        /// Pins or unpins `key`, printing the outcome; shared by `pin` and `unpin`.
        static func setPinned(_ pinned: Bool, key: String, options: CacheOptions) async throws {
            try await options.withSession { session in
                let found: Bool
                do {
                    found = pinned ? try session.cache.pin(key) : try session.cache.unpin(key)
                } catch {
                    throw CLIError(error, while: "\(pinned ? "pinning" : "unpinning") '\(key)'")
                }
                guard found else {
                    throw CLIError.miss(
                        "No entry under '\(key)' in \(session.directory.path) to \(pinned ? "pin" : "unpin"): store it first with 'stash put'."
                    )
                }
                if options.json {
                    try Output.printJSON(Report(key: key, pinned: pinned))
                } else {
                    Terminal.printLine("\(pinned ? "pinned" : "unpinned") '\(key)'")
                }
            }
        }
    }
#endif
