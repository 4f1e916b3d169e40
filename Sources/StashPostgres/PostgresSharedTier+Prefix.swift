#if Postgres
    import Foundation
    import PostgresNIO
    import Stash

    extension PostgresSharedTier {
        /// Removes every entry whose key starts with `prefix`, for the whole fleet at once (a purge of
        /// a path and everything under it).
        ///
        /// - Parameter prefix: The start of the keys to remove; an empty prefix removes every entry.
        /// - Returns: The number of entries removed.
        /// - Throws: `StashError` with `StashError.Code.transport` when the database failed.
        /// - Complexity: One statement; a scan of the table (the index is on the keys' hashes).
        public func removeEntries(withKeyPrefix prefix: String) async throws -> Int {
            try await guarded("remove the prefix", key: prefix) {
                let table = self.configuration.table
                let length = prefix.unicodeScalars.count
                let rows = try await self.client.query(
                    "DELETE FROM \(unescaped: table) WHERE left(key, \(length)::int) = \(prefix) RETURNING 1",
                    logger: self.logger)
                var count = 0
                for try await _ in rows { count += 1 }
                return count
            }
        }
    }
#endif
