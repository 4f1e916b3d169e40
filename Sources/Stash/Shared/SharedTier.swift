import Foundation

/// A cache tier that several processes or machines share, behind the local memory and disk
/// tiers: a lookup walks memory → disk → shared → origin.
///
/// A ``Cache`` or a `ResourceLoader` configured with a shared tier asks it after a local miss
/// and before the origin; a shared hit fills the local tiers, and a value loaded from the origin
/// (or stored) is written to the shared tier too, so that a fleet of servers fetches each
/// resource once. `StashPostgres` provides one on PostgreSQL.
///
/// **Failure is a miss.** The chain treats every error a shared tier throws as a miss (counted
/// and reported, never thrown to the caller), so an implementation should fail fast while its
/// backend is unavailable, for example with a circuit breaker, rather than make every lookup
/// wait for a timeout.
///
/// **Keys** are compared byte for byte, like the local tiers' keys.
public protocol SharedTier: Sendable {
    /// The live entry stored under `key`, or `nil` when there is none or it has expired.
    ///
    /// - Parameter key: A non-empty key, compared byte for byte.
    /// - Returns: The entry, with its complete body, or `nil` on a miss. A body that does not
    ///   match its recorded size and checksum is a miss, never partial bytes.
    /// - Throws: When the backend cannot answer; the chain counts this as a miss.
    /// - Complexity: One round trip to the backend, plus O(*n*) in the body's length.
    func entry(forKey key: String) async throws -> SharedEntry?

    /// Stores `entry` under its key, replacing any entry there, atomically: readers see the old
    /// entry or the new one, never a mix.
    ///
    /// - Parameter entry: The entry to store.
    /// - Throws: When the backend cannot store it, or the body is over the tier's limit.
    /// - Complexity: One round trip, plus O(*n*) in the body's length.
    func store(_ entry: SharedEntry) async throws

    /// Replaces the metadata and expiry of the entry under `key`, keeping its body: what a
    /// `304 Not Modified` revalidation does.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata (content type, validators, caching headers).
    ///   - expires: The new expiry, or `nil` for none.
    ///   - key: The entry's key.
    /// - Returns: `false` when no entry is stored under `key`.
    /// - Throws: When the backend cannot update it.
    /// - Complexity: One round trip.
    func updateMetadata(_ metadata: DiskCache.Metadata, expires: Date?, forKey key: String) async throws -> Bool

    /// Removes the entry under `key`, if there is one.
    ///
    /// - Parameter key: The entry's key.
    /// - Throws: When the backend cannot remove it.
    /// - Complexity: One round trip.
    func removeEntry(forKey key: String) async throws

    /// Whether a live entry is stored under `key`, without reading its body.
    ///
    /// - Parameter key: The entry's key.
    /// - Returns: `true` for a live (unexpired) entry.
    /// - Throws: When the backend cannot answer.
    /// - Complexity: One round trip.
    func containsEntry(forKey key: String) async throws -> Bool

    /// Reads the entry under `key` into `sink`: its head first, then its body chunk by chunk,
    /// so that a large body is never held whole in memory.
    ///
    /// The body is verified (size and checksum) once all of it has been delivered: only a
    /// returned head makes what the sink received usable. A default implementation reads the
    /// body with ``entry(forKey:)`` and delivers it in one chunk.
    ///
    /// - Parameters:
    ///   - key: A non-empty key, compared byte for byte.
    ///   - sink: Receives the head, then the body; see ``SharedBodySink``.
    /// - Returns: The head once the whole body was delivered and verified; `nil` on a miss, for
    ///   an expired entry, when the sink declined it, and for a body that fails verification (the
    ///   sink must then discard what it received).
    /// - Throws: When the backend cannot answer (the chain counts this as a miss), and what the
    ///   sink throws.
    /// - Complexity: One round trip per few chunks, plus O(*n*) in the body's length; memory
    ///   O(chunk) in implementations that stream.
    func streamEntry<Sink: SharedBodySink>(forKey key: String, into sink: Sink) async throws -> SharedEntryHead?

    /// Stores a body that arrives in chunks under `head.key`, replacing any entry there,
    /// atomically: readers see the old entry or the complete new one.
    ///
    /// A default implementation collects the body and calls ``store(_:)``.
    ///
    /// - Parameters:
    ///   - head: The key, the body's exact size, metadata and expiry.
    ///   - body: The body's bytes in order, chunks of any length.
    /// - Throws: `StashError` with `StashError.Code.invalidArgument` when the body's length is
    ///   not `head.size`, what `body` throws, and what ``store(_:)`` throws; nothing is stored.
    /// - Complexity: One round trip per chunk, plus O(*n*) in the body's length; memory
    ///   O(chunk) in implementations that stream.
    func store<Body: AsyncSequence & Sendable>(_ head: SharedEntryHead, body: Body) async throws
    where Body.Element == Data

    /// Takes a fleet-wide lock on `key` before an instance fetches it from the origin, so that
    /// the other instances that miss it at the same time wait for its write instead of fetching
    /// it too.
    ///
    /// The chain looks the key up again once it holds the lock, and releases the lock after the
    /// body has reached the shared tier (or the fetch failed). The default implementation
    /// returns `nil`: no lock, every instance that misses fetches.
    ///
    /// - Parameter key: The key about to be fetched.
    /// - Returns: The held lock, or `nil` when the tier does not lock (or gave up waiting).
    /// - Throws: When the backend cannot answer; the chain then fetches without a lock.
    /// - Complexity: One round trip, plus the wait for another holder.
    func lockForFill(forKey key: String) async throws -> (any SharedTierFillLock)?

    /// Removes every entry whose key starts with `prefix` (a purge); see SharedTier+Removal.swift.
    func removeEntries(withKeyPrefix prefix: String) async throws -> Int
}

extension SharedTier {
    /// No lock: every instance that misses fetches from the origin.
    ///
    /// - Parameter key: The key about to be fetched.
    /// - Returns: `nil`.
    /// - Complexity: O(1).
    public func lockForFill(forKey key: String) async throws -> (any SharedTierFillLock)? { nil }
}

/// A fleet-wide lock on one key, held while one instance fills the shared tier from the origin
/// (see ``SharedTier/lockForFill(forKey:)``).
public protocol SharedTierFillLock: Sendable {
    /// Releases the lock; the instances waiting for it look the key up again. Idempotent.
    ///
    /// - Complexity: One round trip.
    func release() async
}

/// One entry of a ``SharedTier``: a body with its metadata and expiry.
public struct SharedEntry: Sendable, Hashable {
    /// The entry's key, verbatim.
    public var key: String
    /// The complete body.
    public var body: Data
    /// Content type, HTTP validators and other strings stored with the body.
    public var metadata: DiskCache.Metadata
    /// When the entry was stored.
    public var created: Date
    /// When the entry expires, or `nil` to keep it until the tier's limit trims it.
    public var expires: Date?

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - key: The key, verbatim.
    ///   - body: The complete body.
    ///   - metadata: Metadata to store with it. Defaults to none.
    ///   - created: When it was stored. Defaults to now.
    ///   - expires: When it expires. Defaults to `nil`: the tier's own default time-to-live.
    public init(
        key: String, body: Data, metadata: DiskCache.Metadata = DiskCache.Metadata(), created: Date = Date(),
        expires: Date? = nil
    ) {
        self.key = key
        self.body = body
        self.metadata = metadata
        self.created = created
        self.expires = expires
    }

    /// The XXH64 checksum of `body`, as the disk tier records it: implementations store it and
    /// check it on read, so that a damaged or torn body is a miss.
    ///
    /// - Parameter body: The bytes.
    /// - Returns: Their checksum.
    /// - Complexity: O(*n*) in the body's length.
    public static func checksum(of body: Data) -> UInt64 {
        body.withUnsafeBytes { Checksum.of($0) }
    }
}

/// When a value loaded from the origin reaches the shared tier.
public enum SharedTierWriteMode: Sendable, Hashable {
    /// In the background, after the caller has its value: a slow shared tier never slows a load.
    /// The default.
    case writeBehind
    /// Before the load returns: the next instance to ask is sure to find it.
    case writeThrough
}
