import Foundation
import Stash

/// A ``SharedTier`` held in memory that records every key it was asked to store.
///
/// The loader's shared-cache rules are checked on what reaches it. It injects no fault.
final class RecordingSharedTier: SharedTier {
    private let entries = LockedValue([String: SharedEntry]())
    /// Every key stored, in order, repeats included.
    let storedKeys = LockedValue([String]())
    /// Every key removed, in order.
    let removedKeys = LockedValue([String]())

    func entry(forKey key: String) async throws -> SharedEntry? {
        entries.withLock { $0[key] }
    }

    func store(_ entry: SharedEntry) async throws {
        storedKeys.withLock { $0.append(entry.key) }
        entries.withLock { $0[entry.key] = entry }
    }

    func updateMetadata(_ metadata: DiskCache.Metadata, expires: Date?, forKey key: String) async throws -> Bool {
        entries.withLock { entries in
            guard entries[key] != nil else { return false }
            entries[key]!.metadata = metadata
            entries[key]!.expires = expires
            return true
        }
    }

    func removeEntry(forKey key: String) async throws {
        removedKeys.withLock { $0.append(key) }
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    func containsEntry(forKey key: String) async throws -> Bool {
        entries.withLock { $0[key] != nil }
    }

    /// The keys held now.
    var keys: Set<String> { entries.withLock { Set($0.keys) } }
}
