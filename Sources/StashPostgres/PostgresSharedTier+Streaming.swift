#if Postgres
    import Foundation
    import PostgresNIO
    import Stash

    // Large bodies, chunk by chunk: a streamed read fetches one chunk row per round trip and hands
    // it to the sink; a streamed store inserts each chunk row as the body yields it, in one
    // transaction. Memory stays O(chunkSize), not O(body).
    extension PostgresSharedTier {
        /// Chunk rows fetched per round trip by a streamed read.
        ///
        /// One: measured on a 32 MiB body
        /// (release build, loopback), 4 per round trip raised the process's peak resident memory from
        /// about 12 MiB over its baseline to about 20 MiB and read no faster.
        static let chunksPerRead = 1

        /// Reads the entry under `key` into `sink`, one chunk row per round trip, and verifies it.
        ///
        /// Chunks are read by the entry's row id, which a replacement never reuses: a body replaced
        /// or trimmed while it is being read loses its chunk rows, so the read sees fewer rows than
        /// announced and ends as a miss, never as a mix of two bodies.
        ///
        /// - Parameters:
        ///   - key: A non-empty key, compared byte for byte.
        ///   - sink: Receives the head, then the body; it must keep the body aside until this returns.
        /// - Returns: The head once the whole body was delivered and its size and checksum matched;
        ///   `nil` on a miss, for an expired entry, when the sink declined it, and for a damaged,
        ///   torn or concurrently replaced body (counted in ``Statistics/damagedBodies``).
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed, a round
        ///   trip took longer than ``Configuration/operationTimeout`` or the breaker is open; what the
        ///   sink throws.
        /// - Complexity: 1 + *c* indexed queries for *c* chunk rows, O(*n*) in the body's length;
        ///   memory O(``Configuration/chunkSize``).
        public func streamEntry<Sink: SharedBodySink>(forKey key: String, into sink: Sink) async throws
            -> SharedEntryHead?
        {
            let head = try await guarded("read", key: key, wholeTimeout: false) {
                try await self.selectStreaming(key, into: sink)
            }
            counters.withLock { head == nil ? ($0.misses += 1) : ($0.hits += 1) }
            return head
        }

        /// Stores a body that arrives in chunks under `head.key`, one chunk row at a time.
        ///
        /// The rows are inserted as the body yields them, in one transaction: readers see the old
        /// entry until the commit, then the new one whole. Then trims if this process has written
        /// enough since its last trim.
        ///
        /// - Parameters:
        ///   - head: The key, the body's exact size, metadata and expiry (without one, the entry gets
        ///     ``Configuration/defaultTimeToLive``).
        ///   - body: The body's bytes in order, chunks of any length (they are regrouped into
        ///     ``Configuration/chunkSize`` rows).
        /// - Throws: `StashError` with `StashError.Code.tooLarge` when `head.size` is over
        ///   ``Configuration/sizeLimit``, `StashError.Code.invalidKey` for an empty key,
        ///   `StashError.Code.invalidArgument` when the body's length is not `head.size`, what `body`
        ///   throws, or `StashError.Code.transport` when the database failed; nothing is stored then.
        /// - Complexity: One transaction of 5 + *c* statements for *c* chunks, plus a trim; memory
        ///   O(``Configuration/chunkSize``).
        public func store<Body: AsyncSequence & Sendable>(_ head: SharedEntryHead, body: Body)
            async throws where Body.Element == Data
        {
            try Self.validate(key: head.key)
            guard head.size <= configuration.sizeLimit.bytes else { throw tooLarge(head.key, size: head.size) }
            try await guarded("store", key: head.key, wholeTimeout: false) {
                try await self.insertStreaming(head, body: body)
            }
            try await recordStore(size: head.size)
        }

        private func selectStreaming<Sink: SharedBodySink>(_ key: String, into sink: Sink) async throws
            -> SharedEntryHead?
        {
            let now = configuration.clock()
            let timeout = configuration.operationTimeout
            guard let stored = try await withTimeout(timeout, { try await self.selectHead(key, now: now) }) else {
                return nil
            }
            guard try await Self.caller({ try await sink.begin(stored.head) }) else { return nil }
            var checksum = SharedBodyChecksum()
            var received = 0
            if !stored.first.isEmpty {
                checksum.update(stored.first)
                received += stored.first.count
                try await Self.caller { try await sink.append(stored.first) }
            }
            var next = 0
            while next < stored.chunkCount {
                let range = next..<min(next + Self.chunksPerRead, stored.chunkCount)
                let chunks = try await withTimeout(timeout) { try await self.selectChunks(of: stored.id, range) }
                // A missing row: the entry was replaced or trimmed since its head was read.
                guard chunks.map(\.seq) == Array(range) else { return damaged(key) }
                for (_, chunk) in chunks where !chunk.isEmpty {
                    checksum.update(chunk)
                    received += chunk.count
                    try await Self.caller { try await sink.append(chunk) }
                }
                next = range.upperBound
            }
            guard received == stored.head.size, checksum.value == stored.checksum else { return damaged(key) }
            return stored.head
        }

        /// A stored entry's head, where its chunks are, and what they must add up to.
        private struct StoredHead: Sendable {
            var head: SharedEntryHead
            var id: Int64
            var checksum: UInt64
            var chunkCount: Int
            /// The first chunk, kept in the entry's own row.
            var first: Data
        }

        private func selectHead(_ key: String, now: Date) async throws -> StoredHead? {
            let rows = try await client.query(
                """
                SELECT id, size, checksum, chunk_count, created_at, expires_at, content_type, etag, last_modified, extra,
                       body
                FROM \(unescaped: configuration.table)
                WHERE key_hash = sha256(convert_to(\(key), 'UTF8')) AND key = \(key)
                  AND (expires_at IS NULL OR expires_at > \(now))
                """, logger: logger)
            var stored: StoredHead?
            for try await row in rows {
                let (id, size, checksum, count, created, expires, contentType, etag, lastModified, extra, body) =
                    try row.decode(
                        (Int64, Int64, Int64, Int32, Date, Date?, String?, String?, String?, String, Data).self)
                let metadata = DiskCache.Metadata(
                    contentType: contentType, etag: etag, lastModified: lastModified, extra: Self.decodeExtra(extra))
                stored = StoredHead(
                    head: SharedEntryHead(
                        key: key, size: Int(size), metadata: metadata, created: created, expires: expires),
                    id: id, checksum: UInt64(bitPattern: checksum), chunkCount: Int(count), first: body)
            }
            return stored
        }

        private func selectChunks(of id: Int64, _ range: Range<Int>) async throws -> [(seq: Int, data: Data)] {
            let rows = try await client.query(
                """
                SELECT seq, data FROM \(unescaped: configuration.table + "_chunks")
                WHERE entry_id = \(id) AND seq >= \(Int32(range.lowerBound)) AND seq < \(Int32(range.upperBound))
                ORDER BY seq
                """, logger: logger)
            var chunks: [(seq: Int, data: Data)] = []
            for try await row in rows {
                let (seq, data) = try row.decode((Int32, Data).self)
                chunks.append((Int(seq), data))
            }
            return chunks
        }

        private func damaged(_ key: String) -> SharedEntryHead? {
            counters.withLock { $0.damagedBodies += 1 }
            logger.warning(
                "Damaged or concurrently replaced body in the PostgreSQL shared tier; treated as a miss",
                metadata: ["key": "\(key)"])
            return nil
        }

        private func insertStreaming<Body: AsyncSequence & Sendable>(
            _ head: SharedEntryHead, body: Body
        ) async throws where Body.Element == Data {
            let table = configuration.table
            let chunks = table + "_chunks"
            let timeout = configuration.operationTimeout
            let now = configuration.clock()
            let expires =
                head.expires ?? configuration.defaultTimeToLive.map { now.addingTimeInterval(Self.seconds($0)) }
            let key = head.key
            let metadata = head.metadata
            let extra = Self.encodeExtra(metadata.extra)
            let logger = logger
            do {
                try await client.withTransaction(logger: logger) { connection in
                    var reader = ChunkReader(
                        body.makeAsyncIterator(), chunkSize: configuration.chunkSize.bytes, head: head)
                    try await withTimeout(timeout) {
                        try await connection.query(
                            "SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger)
                        try await connection.query(
                            "DELETE FROM \(unescaped: table) WHERE key_hash = sha256(convert_to(\(key), 'UTF8'))",
                            logger: logger)
                    }
                    // Size and checksum are known at the end: the row gets them in the same
                    // transaction, so no reader ever sees the placeholders.
                    let first = try await reader.next() ?? Data()
                    let id = try await withTimeout(timeout) {
                        let rows = try await connection.query(
                            """
                            INSERT INTO \(unescaped: table) (key_hash, key, size, checksum, chunk_count, created_at,
                                accessed_at, expires_at, content_type, etag, last_modified, extra, body)
                            VALUES (sha256(convert_to(\(key), 'UTF8')), \(key), \(Int64(head.size)), 0, 0,
                                \(head.created), \(now), \(expires), \(metadata.contentType), \(metadata.etag),
                                \(metadata.lastModified), \(extra), \(first))
                            RETURNING id
                            """, logger: logger)
                        var id: Int64?
                        for try await row in rows { id = try row.decode(Int64.self) }
                        guard let id else {
                            throw StashError(.io, "INSERT … RETURNING id returned no row for '\(key)'.")
                        }
                        return id
                    }
                    var seq: Int32 = 0
                    while let chunk = try await reader.next() {
                        let index = seq
                        _ = try await withTimeout(timeout) {
                            try await connection.query(
                                "INSERT INTO \(unescaped: chunks) (entry_id, seq, data) VALUES (\(id), \(index), \(chunk))",
                                logger: logger)
                        }
                        seq += 1
                    }
                    guard reader.received == head.size else {
                        throw CallerFailure(error: SharedEntryHead.sizeMismatch(head, received: reader.received))
                    }
                    let checksum = Int64(bitPattern: reader.checksum.value)
                    let count = seq
                    _ = try await withTimeout(timeout) {
                        try await connection.query(
                            "UPDATE \(unescaped: table) SET checksum = \(checksum), chunk_count = \(count) WHERE id = \(id)",
                            logger: logger)
                    }
                }
            } catch let error as PostgresTransactionError {
                // Rolled back; surface what went wrong inside rather than the wrapper.
                if let inner = error.closureError, error.rollbackError == nil { throw inner }
                throw error
            }
        }

        /// Runs the caller's sink, marking what it throws as the caller's failure.
        private static func caller<Result>(_ body: () async throws -> Result) async throws -> Result {
            do {
                return try await body()
            } catch {
                throw CallerFailure(error: error)
            }
        }
    }

    /// Regroups a body's chunks of any length into rows of `chunkSize` bytes (the last shorter),
    /// computing the checksum and refusing a body longer than its head announced.
    private struct ChunkReader<Iterator: AsyncIteratorProtocol> where Iterator.Element == Data {
        private var iterator: Iterator
        private let chunkSize: Int
        private let head: SharedEntryHead
        private var pending = Data()
        private var isExhausted = false
        private(set) var received = 0
        private(set) var checksum = SharedBodyChecksum()

        init(_ iterator: Iterator, chunkSize: Int, head: SharedEntryHead) {
            self.iterator = iterator
            self.chunkSize = chunkSize
            self.head = head
        }

        /// The next row's bytes, or `nil` after the last.
        mutating func next() async throws -> Data? {
            while !isExhausted && pending.count < chunkSize {
                let piece: Data?
                do {
                    piece = try await iterator.next()
                } catch {
                    throw PostgresSharedTier.CallerFailure(error: error)
                }
                guard let piece else {
                    isExhausted = true
                    break
                }
                received += piece.count
                guard received <= head.size else {
                    throw PostgresSharedTier.CallerFailure(
                        error: SharedEntryHead.sizeMismatch(head, received: received))
                }
                checksum.update(piece)
                pending.append(piece)
            }
            guard !pending.isEmpty else { return nil }
            let row = Data(pending.prefix(chunkSize))
            pending = Data(pending.dropFirst(row.count))
            return row
        }
    }
#endif
