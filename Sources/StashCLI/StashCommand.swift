#if Tool
    import ArgumentParser

    /// `stash`: inspects and drives a Stash cache directory from the shell.
    struct StashCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stash",
            abstract: "Cache files and remote resources on disk, from the command line.",
            discussion: """
                Every command works on one cache directory: --dir, by default $XDG_CACHE_HOME/stash \
                (or ~/.cache/stash). --size-limit sets the directory's byte limit and is remembered \
                for it. --json prints machine-readable output.

                Exit status: 0 success, 1 a miss (a key or entry that is not cached, or damage that \
                verify did not repair), 64 bad usage, 74 an I/O error (disk or network).

                Try 'stash demo' to watch the cache at work against a local origin server.
                """,
            version: "0.1.0",
            subcommands: [
                FetchCommand.self, GetCommand.self, PutCommand.self, RemoveCommand.self, PinCommand.self,
                UnpinCommand.self, ListCommand.self, InfoCommand.self, TrimCommand.self, ClearCommand.self,
                VerifyCommand.self, DemoCommand.self,
            ] + serveCommands
        )
    }

    #if Serve
        /// `stash serve`, built with the Serve trait.
        private let serveCommands: [any ParsableCommand.Type] = [ServeCommand.self, PurgeCommand.self]
    #else
        private let serveCommands: [any ParsableCommand.Type] = []
    #endif
#endif
