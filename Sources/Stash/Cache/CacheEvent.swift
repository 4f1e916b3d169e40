/// Something a ``Cache`` noticed and handled on its own, reported through its `onEvent`
/// callback.
///
/// Stash does not log; forward these events to your logger (swift-log, `os.Logger`, …).
public enum CacheEvent: Sendable, CustomStringConvertible {
    /// The bytes stored under `key` could not be decoded; the read was a miss and the disk
    /// entry was removed.
    ///
    /// This happens when an entry was written by another version of the value type, or by
    /// something other than this cache's codec.
    case decodingFailed(key: String, error: StashError)
    /// An entry that could not be decoded could not be removed from disk either; it stays a
    /// miss on every read until it is overwritten, removed or evicted.
    case removalFailed(key: String, error: StashError)

    /// A one-line description of the event.
    public var description: String {
        switch self {
        case .decodingFailed(let key, let error): "removed undecodable entry '\(key)': \(error)"
        case .removalFailed(let key, let error): "could not remove undecodable entry '\(key)': \(error)"
        }
    }
}
