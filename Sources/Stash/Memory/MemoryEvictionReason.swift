/// Why a ``MemoryCache`` dropped an entry that the caller did not remove itself.
///
/// Passed to ``MemoryCache/onEviction``. Values that you remove with
/// ``MemoryCache/removeValue(forKey:)`` or replace with ``MemoryCache/setValue(_:forKey:cost:timeToLive:)``
/// are not reported: you already hold them.
public enum MemoryEvictionReason: Hashable, Sendable, CustomStringConvertible {
    /// The cache was over its ``MemoryCache/costLimit`` or ``MemoryCache/countLimit``, after an
    /// insertion or because a limit was lowered.
    case limit
    /// The entry's time-to-live had passed when it was next looked at.
    case expired
    /// ``MemoryCache/trim(toCost:)`` or ``MemoryCache/trim(toCount:)`` removed it.
    case trimmed
    /// ``MemoryCache/handleMemoryPressure(_:)`` removed it.
    case memoryPressure
    /// ``MemoryCache/removeAll()`` removed it.
    case removedAll
    /// It was being stored and lost ``MemoryEvictionPolicy/adaptive``'s admission contest:
    /// alone costlier than the admission window, it was requested less often per unit of cost
    /// than the entries it would have displaced, so it was not kept.
    case notAdmitted

    /// The reason's name, such as `limit`.
    public var description: String {
        switch self {
        case .limit: "limit"
        case .expired: "expired"
        case .trimmed: "trimmed"
        case .memoryPressure: "memoryPressure"
        case .removedAll: "removedAll"
        case .notAdmitted: "notAdmitted"
        }
    }
}
