#if Tool
    import ArgumentParser
    import Foundation
    import Stash
    import StashHTTP
    import StashPostgres

    /// `--shared postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`: a PostgreSQL shared tier behind the
    /// cache directory, for `fetch`, `get` and `info`.
    struct SharedTierOption: ParsableArguments {
        @Option(
            name: .customLong("shared"),
            help: ArgumentHelp(
                "A PostgreSQL database shared by several machines, asked after the local cache misses and before the origin, such as postgres://stash@127.0.0.1:5432/stash (the password may also come from $PGPASSWORD).",
                valueName: "url"))
        var url: String?

        @Option(
            name: .customLong("shared-table"),
            help: ArgumentHelp(
                "The shared tier's table (default: stash_entries): one per fleet that must not share entries with another in the same database; 1 to 48 lowercase letters, digits and underscores, starting with a letter.",
                valueName: "name"))
        var table: String?

        @Option(
            name: .customLong("shared-size-limit"),
            help: ArgumentHelp(
                "The shared tier's byte limit (default: 1GB), such as 500MB or 20GiB: past it, a store deletes the oldest entries.",
                valueName: "size"))
        var sizeLimitText: String?

        @Option(
            name: .customLong("shared-timeout"),
            help: ArgumentHelp(
                "Seconds one PostgreSQL operation may take before it counts as a failure (default: 2); after 3 failures running, the shared tier is skipped for 5 seconds and the origin answers.",
                valueName: "seconds"))
        var timeoutSeconds: Double?

        /// The names of the options given that set up the tier (`--shared-table`, …).
        var settingsGiven: [String] {
            [
                (table != nil, "--shared-table"), (sizeLimitText != nil, "--shared-size-limit"),
                (timeoutSeconds != nil, "--shared-timeout"),
            ].filter(\.0).map(\.1)
        }

        /// Refuses the shared tier's options that can never work before the command runs, and
        /// those given without `--shared`, which would change nothing.
        func validate() throws {
            if url == nil, let option = settingsGiven.first {
                throw ValidationError(
                    "\(option) sets up the shared tier, which needs --shared postgres://USER@HOST[:PORT]/DATABASE.")
            }
            _ = try configuration()
        }

        /// The shared tier's configuration from the options, or a `ValidationError` (exit status 64)
        /// that names the option and what it accepts; the tier itself rejects a table name it
        /// cannot use, with the same status.
        func configuration() throws -> PostgresSharedTier.Configuration {
            var configuration = PostgresSharedTier.Configuration()
            if let table { configuration.table = table }
            if let size = try CacheOptions.parseSize(sizeLimitText, option: "--shared-size-limit") {
                configuration.sizeLimit = size
            }
            if let timeoutSeconds {
                guard timeoutSeconds.isFinite, timeoutSeconds > 0, timeoutSeconds <= 3600 else {
                    throw ValidationError(
                        "Invalid --shared-timeout \(timeoutSeconds): give the seconds one operation may take, more than 0 and at most 3600, such as 2 or 0.5."
                    )
                }
                configuration.operationTimeout = .milliseconds(Int64((timeoutSeconds * 1000).rounded(.up)))
            }
            return configuration
        }

        /// What `info --json` reports about the shared tier.
        struct Info: Encodable {
            var endpoint: String
            var table: String
            var sizeLimit: Int
            var totalCount: Int?
            var totalSize: Int?
            var error: String?
        }

        /// Connects to `--shared`, or returns `nil` without it.
        ///
        /// - Throws: ``CLIError`` with status 64 for a malformed URL or rejected credentials.
        func connect() async throws -> PostgresSharedTier? {
            guard var url else { return nil }
            let configuration = try configuration()
            if let password = ProcessInfo.processInfo.environment["PGPASSWORD"],
                var components = URLComponents(string: url),
                components.password == nil
            {
                components.password = password
                url = components.string ?? url
            }
            do {
                return try await PostgresSharedTier(url: url, configuration: configuration)
            } catch {
                throw CLIError(error, while: "connecting to the shared tier")
            }
        }

        /// Makes `configuration` use `tier`, writing through: the command exits right after its loads.
        static func apply(_ tier: PostgresSharedTier?, to configuration: inout ResourceLoader.Configuration) {
            guard let tier else { return }
            configuration.sharedTier = tier
            configuration.sharedTierWriteMode = .writeThrough
        }

        /// After a local miss of `key`: the shared tier's entry, stored in `cache`, or `nil`.
        static func fill(_ key: String, from tier: PostgresSharedTier?, into cache: DiskCache) async throws
            -> (data: Data, attributes: DiskCache.Attributes)?
        {
            guard let tier, let entry = try? await tier.entry(forKey: key) else { return nil }
            do {
                let timeToLive = entry.expires.map { Duration.seconds(max(0.001, $0.timeIntervalSinceNow)) }
                try await cache.store(entry.body, forKey: key, timeToLive: timeToLive, metadata: entry.metadata)
                guard let attributes = try await cache.attributes(forKey: key) else { return nil }
                return (entry.body, attributes)
            } catch {
                throw CLIError(error, while: "storing '\(key)' from the shared tier")
            }
        }

        /// The shared tier's endpoint, limit and totals.
        static func info(_ tier: PostgresSharedTier?) async -> Info? {
            guard let tier else { return nil }
            var info = Info(
                endpoint: tier.endpoint, table: tier.configuration.table, sizeLimit: tier.configuration.sizeLimit.bytes)
            do {
                let totals = try await tier.totals()
                (info.totalSize, info.totalCount) = (totals.size, totals.count)
            } catch {
                info.error = (error as? StashError)?.message ?? "\(error)"
            }
            return info
        }

        /// The human form of `info`.
        static func lines(_ info: Info?) -> [String] {
            guard let info else { return [] }
            let entries =
                info.totalCount.map { "\($0), \(Output.size(info.totalSize ?? 0))" }
                ?? "unavailable: \(info.error ?? "")"
            return Output.table([
                [
                    "shared tier",
                    "postgres://\(info.endpoint), table \(info.table), limit \(Output.size(info.sizeLimit))",
                ],
                ["shared entries", entries],
            ])
        }
    }
#endif
