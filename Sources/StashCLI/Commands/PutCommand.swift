#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash put KEY [FILE|-]`: stores a file or standard input under a key.
    struct PutCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "put",
            abstract: "Store a file, or standard input, under a key.",
            discussion: """
                Replaces any value stored under the key atomically, then evicts other entries, as the \
                eviction policy chooses, if the size limit is exceeded. A pinned entry is never evicted.
                """
        )

        @Argument(help: "The key: any non-empty string.")
        var key: String

        @Argument(help: ArgumentHelp("The file to store, or - for standard input.", valueName: "file"))
        var file: String = "-"

        @Flag(name: .customLong("pin"), help: "Pin the entry: it is never evicted until 'stash unpin'.")
        var pin = false

        @OptionGroup var options: CacheOptions

        /// What `--json` prints.
        struct Report: Encodable {
            var key: String
            var size: Int
            var pinned: Bool
        }

        func run() async throws {
            try await options.withSession { session in
                let cache = session.cache
                let pinned: Bool? = pin ? true : nil
                let stored: DiskCache.Attributes?
                do {
                    // Asked for by name: kept through its store even when the admission policy
                    // would turn a large newcomer away.
                    if file == "-" {
                        let data = FileHandle.standardInput.readDataToEndOfFile()
                        try cache.store(data, forKey: key, pinned: pinned, mayBeTurnedAway: false)
                    } else {
                        try cache.store(
                            fileAt: URL(fileURLWithPath: file), forKey: key, pinned: pinned, mayBeTurnedAway: false)
                    }
                    stored = try cache.attributes(forKey: key)
                } catch {
                    throw CLIError(error, while: "storing '\(key)'")
                }
                guard let attributes = stored else {
                    throw CLIError.io(
                        "'\(key)' was evicted as soon as it was stored: raise the limit with --size-limit, or store it with --pin."
                    )
                }
                if options.json {
                    try Output.printJSON(Report(key: key, size: attributes.size, pinned: attributes.isPinned))
                } else {
                    let pinNote = attributes.isPinned ? ", pinned" : ""
                    Terminal.printLine("stored '\(key)' (\(Output.size(attributes.size))\(pinNote))")
                }
            }
        }
    }
#endif
