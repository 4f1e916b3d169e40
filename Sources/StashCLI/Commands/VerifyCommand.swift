#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash verify [--repair]`: checks every entry's bytes and the index.
    struct VerifyCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check the index and every stored byte; with --repair, drop what is damaged.",
            discussion: """
                Reads every value and compares its length and checksum, checks the running totals and looks \
                for orphan files. Exits with status 1 when it finds damage that it did not repair. A damaged \
                index is moved aside and rebuilt from the value files by --repair (or at once by --rebuild); \
                a rebuild done when the cache was opened is reported too.
                """
        )

        @Flag(
            help: "Drop damaged entries, fix the totals, remove orphan files, rebuild a damaged index from the files.")
        var repair = false

        @Flag(help: "Rebuild the index from the value files even if it looks healthy, then repair (implies --repair).")
        var rebuild = false

        @OptionGroup var options: CacheOptions

        /// One damaged entry, in `--json` output.
        struct Damage: Encodable {
            var key: String
            var reason: String
        }

        /// What `--json` prints.
        struct Report: Encodable {
            var healthy: Bool
            var repaired: Bool
            var entriesChecked: Int
            var bytesChecked: Int
            var damagedEntries: [Damage]
            var orphanFiles: Int
            var orphanBytes: Int
            var totalsMismatch: Bool
            var indexProblems: [String]
            var rebuild: DiskCache.IndexRebuild?
        }

        func run() async throws {
            try await options.withSession(inspecting: true) { session in
                var result: DiskCache.VerificationReport
                do {
                    let forced = rebuild ? try session.cache.rebuildIndex() : nil
                    result = try session.cache.verify(repair: repair || rebuild)
                    result.rebuild = result.rebuild ?? forced ?? session.rebuild
                } catch {
                    throw CLIError(error, while: "verifying \(session.directory.path)")
                }
                if options.json {
                    try Output.printJSON(
                        Report(
                            healthy: result.isHealthy, repaired: result.repaired, entriesChecked: result.entriesChecked,
                            bytesChecked: result.bytesChecked,
                            damagedEntries: result.damagedEntries.map { Damage(key: $0.key, reason: $0.reason) },
                            orphanFiles: result.orphanFiles, orphanBytes: result.orphanBytes,
                            totalsMismatch: result.totalsMismatch, indexProblems: result.indexProblems,
                            rebuild: result.rebuild))
                } else {
                    Terminal.printLine(result.description)
                }
                if !result.isHealthy && !result.repaired {
                    throw CLIError.miss(
                        "Found damage in \(session.directory.path): run 'stash verify --repair' to drop damaged entries and orphan files."
                    )
                }
            }
        }
    }
#endif
