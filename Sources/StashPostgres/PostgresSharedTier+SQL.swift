#if Postgres
    import Foundation
    import PostgresNIO
    import Stash

    // The statements, next to the code that owns them. Every value is a bind parameter; only the
    // table name is spliced in, and `Configuration.validate()` allows nothing but [a-z][a-z0-9_]*.
    extension PostgresSharedTier {
        private var table: String { configuration.table }
        private var chunks: String { configuration.table + "_chunks" }

        /// Creates the tables and index if they do not exist, serialised across processes by an
        /// advisory lock (concurrent `CREATE TABLE IF NOT EXISTS` can otherwise collide).
        func createSchema() async throws {
            try await client.withConnection { connection in try await self.createSchema(on: connection) }
        }

        /// Creates the tables on `connection`.
        func createSchema(on connection: PostgresConnection) async throws {
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.schemaLock))", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS \(unescaped: table) (
                        id bigserial UNIQUE,
                        key_hash bytea PRIMARY KEY,
                        key text NOT NULL,
                        size bigint NOT NULL,
                        checksum bigint NOT NULL,
                        chunk_count integer NOT NULL,
                        created_at timestamptz NOT NULL,
                        accessed_at timestamptz NOT NULL,
                        expires_at timestamptz,
                        content_type text,
                        etag text,
                        last_modified text,
                        extra text NOT NULL,
                        body bytea NOT NULL
                    )
                    """, logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS \(unescaped: chunks) (
                        entry_id bigint NOT NULL REFERENCES \(unescaped: table) (id) ON DELETE CASCADE,
                        seq integer NOT NULL,
                        data bytea NOT NULL,
                        PRIMARY KEY (entry_id, seq)
                    )
                    """, logger: logger)
                try await connection.query(
                    """
                    CREATE INDEX IF NOT EXISTS \(unescaped: table)_expires ON \(unescaped: table) (expires_at)
                    WHERE expires_at IS NOT NULL
                    """, logger: logger)
            }
        }

        /// Reads the entry and its chunks in one statement (one snapshot), and checks the body.
        func select(_ key: String) async throws -> SharedEntry? {
            let now = configuration.clock()
            let rows = try await client.query(
                """
                SELECT e.size, e.checksum, e.chunk_count, e.created_at, e.expires_at, e.content_type, e.etag,
                       e.last_modified, e.extra, e.body, c.data
                FROM \(unescaped: table) e LEFT JOIN \(unescaped: chunks) c ON c.entry_id = e.id
                WHERE e.key_hash = sha256(convert_to(\(key), 'UTF8')) AND e.key = \(key)
                  AND (e.expires_at IS NULL OR e.expires_at > \(now))
                ORDER BY c.seq
                """, logger: logger)
            var entry: SharedEntry?
            var expected = (size: 0, checksum: UInt64(0), chunks: 0)
            var chunkCount = 0
            for try await row in rows {
                let (size, checksum, count, created, expires, contentType, etag, lastModified, extra, body, chunk) =
                    try row.decode(
                        (Int64, Int64, Int32, Date, Date?, String?, String?, String?, String, Data, Data?).self)
                if entry == nil {
                    let metadata = DiskCache.Metadata(
                        contentType: contentType, etag: etag, lastModified: lastModified, extra: Self.decodeExtra(extra)
                    )
                    entry = SharedEntry(key: key, body: body, metadata: metadata, created: created, expires: expires)
                    expected = (Int(size), UInt64(bitPattern: checksum), Int(count))
                }
                if let chunk {
                    entry?.body.append(chunk)
                    chunkCount += 1
                }
            }
            guard let entry else { return nil }
            guard chunkCount == expected.chunks, entry.body.count == expected.size,
                SharedEntry.checksum(of: entry.body) == expected.checksum
            else {
                counters.withLock { $0.damagedBodies += 1 }
                logger.warning(
                    "Damaged body in the PostgreSQL shared tier; treated as a miss", metadata: ["key": "\(key)"])
                return nil
            }
            return entry
        }

        /// Replaces the entry under `entry.key` in one transaction, serialised per key.
        func insert(_ entry: SharedEntry) async throws {
            let chunkSize = configuration.chunkSize.bytes
            let body = entry.body
            let first = body.prefix(chunkSize)
            let rest = stride(from: body.startIndex + first.count, to: body.endIndex, by: chunkSize).map {
                Data(body[$0..<min($0 + chunkSize, body.endIndex)])
            }
            let now = configuration.clock()
            let expires =
                entry.expires ?? configuration.defaultTimeToLive.map { now.addingTimeInterval(Self.seconds($0)) }
            let checksum = Int64(bitPattern: SharedEntry.checksum(of: body))
            let key = entry.key
            let metadata = entry.metadata
            let extra = Self.encodeExtra(metadata.extra)
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger)
                try await connection.query(
                    "DELETE FROM \(unescaped: table) WHERE key_hash = sha256(convert_to(\(key), 'UTF8'))",
                    logger: logger)
                let rows = try await connection.query(
                    """
                    INSERT INTO \(unescaped: table) (key_hash, key, size, checksum, chunk_count, created_at, accessed_at,
                        expires_at, content_type, etag, last_modified, extra, body)
                    VALUES (sha256(convert_to(\(key), 'UTF8')), \(key), \(Int64(body.count)), \(checksum),
                        \(Int32(rest.count)), \(entry.created), \(now), \(expires), \(metadata.contentType),
                        \(metadata.etag), \(metadata.lastModified), \(extra), \(Data(first)))
                    RETURNING id
                    """, logger: logger)
                var id: Int64?
                for try await row in rows { id = try row.decode(Int64.self) }
                guard let id else { throw StashError(.io, "INSERT … RETURNING id returned no row for '\(key)'.") }
                for (seq, chunk) in rest.enumerated() {
                    try await connection.query(
                        "INSERT INTO \(unescaped: chunks) (entry_id, seq, data) VALUES (\(id), \(Int32(seq)), \(chunk))",
                        logger: logger)
                }
            }
        }

        func update(_ metadata: DiskCache.Metadata, expires: Date?, key: String) async throws -> Bool {
            let now = configuration.clock()
            let rows = try await client.query(
                """
                UPDATE \(unescaped: table) SET content_type = \(metadata.contentType), etag = \(metadata.etag),
                    last_modified = \(metadata.lastModified), extra = \(Self.encodeExtra(metadata.extra)),
                    expires_at = \(expires), accessed_at = \(now)
                WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key)
                RETURNING id
                """, logger: logger)
            var updated = false
            for try await _ in rows { updated = true }
            return updated
        }

        func delete(_ key: String) async throws {
            try await client.query(
                "DELETE FROM \(unescaped: table) WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key)",
                logger: logger)
        }

        func exists(_ key: String) async throws -> Bool {
            let now = configuration.clock()
            let rows = try await client.query(
                """
                SELECT 1 FROM \(unescaped: table)
                WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key)
                  AND (expires_at IS NULL OR expires_at > \(now))
                """, logger: logger)
            var found = false
            for try await _ in rows { found = true }
            return found
        }

        /// Expired rows, then the oldest rows down to 90 % of the limit when over it; skipped (0)
        /// while another process trims.
        func trimOldest() async throws -> Int {
            let now = configuration.clock()
            let limit = Int64(configuration.sizeLimit.bytes)
            let lowWater = limit - limit / 10
            return try await client.withTransaction(logger: logger) { connection in
                var locked = false
                for try await row in try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(Self.trimLock))", logger: logger)
                {
                    locked = try row.decode(Bool.self)
                }
                guard locked else { return 0 }
                var deleted = 0
                for try await _ in try await connection.query(
                    "DELETE FROM \(unescaped: table) WHERE expires_at <= \(now) RETURNING 1", logger: logger)
                {
                    deleted += 1
                }
                // Newest first, a running total: every row past the low-water mark goes, in one
                // statement, but only when the table is over the limit.
                for try await _ in try await connection.query(
                    """
                    WITH ranked AS (
                        SELECT id, sum(size) OVER (ORDER BY id DESC) AS newer, sum(size) OVER () AS total
                        FROM \(unescaped: table))
                    DELETE FROM \(unescaped: table) t USING ranked
                    WHERE t.id = ranked.id AND ranked.total > \(limit) AND ranked.newer > \(lowWater)
                    RETURNING 1
                    """, logger: logger)
                {
                    deleted += 1
                }
                return deleted
            }
        }

        func selectTotals() async throws -> (size: Int, count: Int) {
            var totals = (size: 0, count: 0)
            for try await row in try await client.query(
                "SELECT coalesce(sum(size), 0)::bigint, count(*) FROM \(unescaped: table)", logger: logger)
            {
                let (size, count) = try row.decode((Int64, Int64).self)
                totals = (Int(size), Int(count))
            }
            return totals
        }

        func truncate() async throws {
            try await client.query("TRUNCATE \(unescaped: table), \(unescaped: chunks)", logger: logger)
        }

        /// Advisory lock numbers: arbitrary constants, the same in every process.
        static let schemaLock: Int64 = 0x5354_4153_4801
        static let trimLock: Int64 = 0x5354_4153_4802

        static func seconds(_ duration: Duration) -> TimeInterval {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        static func encodeExtra(_ extra: [String: String]) -> String {
            guard !extra.isEmpty else { return "{}" }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return (try? encoder.encode(extra)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
        }

        static func decodeExtra(_ text: String) -> [String: String] {
            guard text != "{}" else { return [:] }
            return (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
        }
    }
#endif
