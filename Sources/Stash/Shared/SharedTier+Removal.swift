import Foundation

extension SharedTier {
    /// A tier that cannot remove by prefix: fails with `StashError.Code.invalidArgument`.
    ///
    /// A backend that can should implement it (`PostgresSharedTier` does, in one statement), so that a
    /// purge of every URL under a path reaches the whole fleet at once.
    ///
    /// - Parameter prefix: The start of the keys to remove.
    /// - Returns: Never returns.
    /// - Throws: `StashError` with `StashError.Code.invalidArgument`.
    /// - Complexity: O(1).
    public func removeEntries(withKeyPrefix prefix: String) async throws -> Int {
        throw StashError(
            .invalidArgument,
            "This shared tier (\(type(of: self))) cannot remove the entries under the prefix '\(prefix)': remove them one key at a time with removeEntry(forKey:)."
        )
    }
}
