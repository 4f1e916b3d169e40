#if Tool
    import ArgumentParser
    import Foundation
    import Stash

    /// `stash get KEY [-o FILE]`: writes a stored value to standard output or a file.
    struct GetCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get",
            abstract: "Write the value stored under a key to standard output, or to a file.",
            discussion: """
                Exits with status 1, and one line on standard error, when nothing is stored under the key. \
                With --json, prints the entry's attributes instead of its bytes. \
                -o - writes to standard output. An existing device, FIFO or socket is written in place (opening \
                a FIFO waits for its reader); a symbolic link is written through to its existing target; only a \
                new path or a regular file is replaced, atomically, keeping the file's permissions. A directory, \
                a missing directory or a file or directory without write permission is refused and left as it is.
                """
        )

        @Argument(help: "The key, exactly as stored.")
        var key: String

        @Option(
            name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp(
                "Write the value to this file (or device, FIFO, socket, link) instead of standard output; - for standard output.",
                valueName: "file"))
        var output: String?

        @OptionGroup var options: CacheOptions
        @OptionGroup var shared: SharedTierOption

        /// What `--json` prints.
        struct Report: Encodable {
            var key: String
            var size: Int
            var pinned: Bool
            var created: Date
            var lastAccess: Date
            var expires: Date?
            var contentType: String?
            var etag: String?
            var output: String?
        }

        func validate() throws {
            if output == "-" && options.json {
                throw ValidationError(
                    "--json and -o - would both write to standard output: give -o a file, or drop one of them.")
            }
        }

        func run() async throws {
            // Bad usage is reported before the directory is looked at.
            if key.isEmpty {
                throw CLIError.usage("A cache key must not be empty: use a non-empty string such as the URL.")
            }
            // So is an output that cannot be written, before the value is read.
            let destination = try output.map { try OutputFile(path: $0, for: "'\(key)'") }
            let sharedTier = try await shared.connect()
            defer { sharedTier?.shutdown() }
            // With a shared tier, a hit there fills the local cache, which may not exist yet.
            try await options.withSession(inspecting: sharedTier == nil) { session in
                let cache = session.cache
                var found: (data: Data, attributes: DiskCache.Attributes)?
                do {
                    found = try await cache.data(forKey: key).flatMap { data in
                        try cache.attributes(forKey: key).map { (data, $0) }
                    }
                } catch {
                    throw CLIError(error, while: "reading '\(key)'")
                }
                if found == nil { found = try await SharedTierOption.fill(key, from: sharedTier, into: cache) }
                guard let (data, attributes) = found else {
                    session.record { $0.getMisses += 1 }
                    throw CLIError.miss(
                        "No entry under '\(key)' in \(session.directory.path): list the keys with 'stash ls'.")
                }
                session.record {
                    $0.getHits += 1
                    $0.bytesServed += data.count
                }
                try destination?.write(data)
                if options.json {
                    try Output.printJSON(
                        Report(
                            key: key, size: data.count, pinned: attributes.isPinned, created: attributes.created,
                            lastAccess: attributes.lastAccess, expires: attributes.expires,
                            contentType: attributes.metadata.contentType, etag: attributes.metadata.etag,
                            output: output.map { URL(fileURLWithPath: $0).path }))
                } else if let output, destination?.isStandardOutput == false {
                    Terminal.printLine("wrote '\(key)' (\(Output.size(data.count))) to \(output)")
                } else if destination == nil {
                    Terminal.writeOutput(data)
                }
            }
        }
    }
#endif
