#if Benchmarks
    import Foundation
    import Logging
    import PostgresNIO
    import Stash

    /// What an LRU trim would cost on every shared-tier hit.
    ///
    /// The tier's FIFO hit is a read (one `SELECT`); an LRU hit must also record the access (`UPDATE … SET accessed_at … RETURNING`),
    /// and its trim needs an index on `accessed_at`, which stops PostgreSQL from updating the row
    /// in place (no HOT update). Rows like the tier's (32 KiB bodies, so TOASTed), 1000 keys, hit
    /// in random order; latency percentiles sequentially, then throughput with 8 concurrent hits,
    /// and the WAL written per hit. Rounds interleave the three variants; medians are printed.
    struct AccessCostBenchmark {
        let url: String
        let rounds: Int

        enum Variant: String, CaseIterable {
            case select = "FIFO hit: SELECT"
            case update = "LRU hit: UPDATE accessed_at RETURNING (no index)"
            case updateIndexed = "LRU hit: UPDATE … RETURNING, index on accessed_at"
        }

        func run() async throws {
            let components = URLComponents(string: url)!
            let configuration = PostgresClient.Configuration(
                host: components.host!, port: components.port ?? 5432, username: components.user!,
                password: components.password, database: String(components.path.dropFirst()), tls: .disable)
            let logger = Logger(label: "stash.bench")
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            let runner = Task { await client.run() }
            defer { runner.cancel() }
            let suffix = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(10)
            let plain = "bench_access_\(suffix)"
            let indexed = "bench_access_idx_\(suffix)"
            let keys = 1000
            for table in [plain, indexed] {
                try await client.query(
                    """
                    CREATE TABLE \(unescaped: table) (key_hash bytea PRIMARY KEY, key text NOT NULL, size bigint NOT NULL,
                        created_at timestamptz NOT NULL, accessed_at timestamptz NOT NULL, body bytea NOT NULL)
                    """, logger: logger)
                for index in 0..<keys {
                    let key = "photo-\(index)"
                    let body = BenchmarkOrigin.bytes(32 * 1024, seed: UInt64(index))
                    try await client.query(
                        """
                        INSERT INTO \(unescaped: table) VALUES (sha256(convert_to(\(key), 'UTF8')), \(key), 32768, now(),
                            now(), \(body))
                        """, logger: logger)
                }
            }
            try await client.query("CREATE INDEX ON \(unescaped: indexed) (accessed_at)", logger: logger)

            @Sendable func hit(_ variant: Variant, _ key: String) async throws {
                let rows: PostgresRowSequence
                switch variant {
                case .select:
                    rows = try await client.query(
                        "SELECT body FROM \(unescaped: plain) WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key)",
                        logger: logger)
                case .update, .updateIndexed:
                    let table = variant == .update ? plain : indexed
                    rows = try await client.query(
                        """
                        UPDATE \(unescaped: table) SET accessed_at = \(Date())
                        WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key) RETURNING body
                        """, logger: logger)
                }
                var count = 0
                for try await row in rows { count += try row.decode(Data.self).count }
                guard count == 32 * 1024 else { throw BenchmarkError.wrongBody }
            }
            func walPosition() async throws -> String {
                var position = ""
                for try await row in try await client.query("SELECT pg_current_wal_lsn()::text", logger: logger) {
                    position = try row.decode(String.self)
                }
                return position
            }
            func walBytes(since start: String) async throws -> Double {
                var bytes = 0.0
                for try await row in try await client.query(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), \(start)::pg_lsn)::float8", logger: logger)
                {
                    bytes = try row.decode(Double.self)
                }
                return bytes
            }

            var results: [Variant: [(p50: Double, p99: Double, perSecond: Double, wal: Double)]] = [:]
            var random = SystemRandomNumberGenerator()
            for _ in 0..<rounds {
                for variant in Variant.allCases {
                    for _ in 0..<200 { try await hit(variant, "photo-\(Int.random(in: 0..<keys, using: &random))") }
                    let walStart = try await walPosition()
                    var samples: [Double] = []
                    for _ in 0..<2000 {
                        let key = "photo-\(Int.random(in: 0..<keys, using: &random))"
                        let start = ContinuousClock.now
                        try await hit(variant, key)
                        samples.append(milliseconds(ContinuousClock.now - start))
                    }
                    let wal = try await walBytes(since: walStart) / 2000
                    samples.sort()
                    let total = 4000
                    let start = ContinuousClock.now
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for worker in 0..<8 {
                            group.addTask {
                                for index in stride(from: worker, to: total, by: 8) {
                                    try await hit(variant, "photo-\((index * 7919) % keys)")
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    let perSecond = Double(total) / seconds(ContinuousClock.now - start)
                    results[variant, default: []].append(
                        (samples[samples.count / 2], samples[samples.count * 99 / 100], perSecond, wal))
                }
            }
            print(
                "\nCost of recording each hit (LRU) vs not (FIFO): 32 KiB rows, \(keys) keys, \(rounds) interleaved rounds, medians"
            )
            print(
                "variant".padding(toLength: 52, withPad: " ", startingAt: 0)
                    + "  p50 ms  p99 ms  hits/s (8 conc)  WAL B/hit")
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            for variant in Variant.allCases {
                let rows = results[variant] ?? []
                print(
                    variant.rawValue.padding(toLength: 52, withPad: " ", startingAt: 0)
                        + pad(format(median(rows.map(\.p50))), 8) + pad(format(median(rows.map(\.p99))), 8)
                        + pad(format(median(rows.map(\.perSecond)), 0), 16)
                        + pad(format(median(rows.map(\.wal)), 0), 11))
            }
            for table in [plain, indexed] {
                try await client.query("DROP TABLE \(unescaped: table)", logger: logger)
            }
        }
    }
#endif
