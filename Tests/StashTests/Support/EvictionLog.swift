@testable import Stash

/// Records what a cache's `onEviction` callback reported, in order.
final class EvictionLog<Key: Hashable & Sendable, Value: Hashable & Sendable>: Sendable {
    struct Entry: Hashable, CustomStringConvertible {
        var key: Key
        var value: Value
        var reason: MemoryEvictionReason
        var description: String { "\(key)=\(value) (\(reason))" }
    }

    private let entries = LockedValue<[Entry]>([])

    /// A callback to assign to `onEviction`.
    var callback: @Sendable (Key, Value, MemoryEvictionReason) -> Void {
        { [entries] key, value, reason in
            entries.withLock { $0.append(Entry(key: key, value: value, reason: reason)) }
        }
    }

    /// Returns the entries recorded so far and forgets them.
    func take() -> [Entry] {
        entries.withLock { entries in
            defer { entries = [] }
            return entries
        }
    }
}
