import Stash

/// Per-key write counters that keep the loader's memory tiers from being refilled with bytes
/// that a later write replaced.
///
/// Disk and memory are updated one after the other, without a lock across both (the disk work
/// is I/O), so a request that read an entry (or received it from a transfer) could otherwise
/// promote it to memory after a newer transfer of the same key stored other bytes and cleared
/// memory. Every write of an entry by the loader (a stored body, a 304's metadata, a removal)
/// is bracketed by ``beginWrite(_:ifVersion:)`` / ``endWrite(_:)``, each of which bumps the key's
/// version. A request notes the version its bytes belong to and promotes them only while
/// ``isCurrent(_:_:)``, checking again after promoting.
///
/// State is kept only for keys that a request, transfer or write is working on (``hold(_:)`` /
/// ``release(_:)``), so a version never restarts under a comparison and the table does not
/// grow with the number of keys ever loaded. Every method takes one short lock.
final class KeyVersions: Sendable {
    private struct KeyState {
        var version: UInt64 = 0
        var writers = 0
        var holders = 0
    }

    private let state = LockedValue([CacheKey: KeyState]())

    /// Starts working on `key`; call ``release(_:)`` when done.
    ///
    /// - Returns: The key's current version.
    @discardableResult
    func hold(_ key: CacheKey) -> UInt64 {
        state.withLock { keys in
            keys[key, default: KeyState()].holders += 1
            return keys[key]!.version
        }
    }

    /// Stops working on `key`.
    func release(_ key: CacheKey) {
        state.withLock { keys in
            keys[key]!.holders -= 1
            if keys[key]!.holders == 0 { keys[key] = nil }
        }
    }

    /// The current version of a held key.
    func version(of key: CacheKey) -> UInt64 {
        state.withLock { $0[key]?.version ?? 0 }
    }

    /// Whether no write of `key` is in progress and none has happened since `version`.
    func isCurrent(_ key: CacheKey, _ version: UInt64) -> Bool {
        state.withLock { keys in
            guard let keyState = keys[key] else { return false }
            return keyState.writers == 0 && keyState.version == version
        }
    }

    /// Starts a write of `key` (and holds it); call ``endWrite(_:)`` when memory is updated.
    ///
    /// - Parameter version: Start only if the key is still at this version, with no write in
    ///   progress; `nil` to start unconditionally.
    /// - Returns: Whether the write started.
    @discardableResult
    func beginWrite(_ key: CacheKey, ifVersion version: UInt64? = nil) -> Bool {
        state.withLock { keys in
            var keyState = keys[key, default: KeyState()]
            if let version, keyState.writers > 0 || keyState.version != version { return false }
            keyState.writers += 1
            keyState.version &+= 1
            keyState.holders += 1
            keys[key] = keyState
            return true
        }
    }

    /// Ends a write started with ``beginWrite(_:ifVersion:)``.
    ///
    /// - Returns: The key's version after the write, which the bytes it wrote belong to.
    @discardableResult
    func endWrite(_ key: CacheKey) -> UInt64 {
        state.withLock { keys in
            keys[key]!.writers -= 1
            keys[key]!.version &+= 1
            let version = keys[key]!.version
            keys[key]!.holders -= 1
            if keys[key]!.holders == 0 { keys[key] = nil }
            return version
        }
    }

    /// Keys with state kept (a test hook: zero when the loader is idle).
    var trackedKeyCount: Int { state.withLock { $0.count } }
}
