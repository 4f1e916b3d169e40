#if Tool
    import ArgumentParser

    /// `stash unpin KEY`: makes a pinned entry evictable again.
    struct UnpinCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unpin",
            abstract: "Unpin an entry, making it evictable again.",
            discussion: """
                If the cache is now over its size limit, entries are evicted at once, as its eviction policy chooses. \
                Exits with status 1 when the key is not cached.
                """
        )

        @Argument(help: "The key, exactly as stored.")
        var key: String

        @OptionGroup var options: CacheOptions

        func run() async throws {
            try await PinCommand.setPinned(false, key: key, options: options)
        }
    }
#endif
