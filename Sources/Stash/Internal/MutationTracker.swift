/// Detects when a write to a key overlapped another operation on the same key, so that the
/// memory tier of a ``Cache`` never keeps a value that differs from the disk's.
///
/// The disk and the memory tier are updated one after the other, without a lock held across
/// both (the disk write is I/O). Two operations on one key can therefore interleave:
///
/// * a read that found nothing in memory reads the old value from disk, a store then replaces it
///   on disk and in memory, and the read promotes the old value to memory, over the new one;
/// * two stores write the disk in one order and the memory tier in the other.
///
/// Either way, memory would serve a stale value until it is evicted. So every store or removal
/// is a *mutation* bracketed by ``begin(_:)`` / ``end(_:)``, and a read that may promote is
/// bracketed by ``beginRead(_:)`` / ``endRead(_:)``. An operation that finds, after updating the
/// memory tier, that another mutation of the same key began or ended during its own run removes
/// the key from memory: the next read then goes to disk, which holds the latest value. Removing
/// is always safe, because the disk stays authoritative.
///
/// State is kept only for keys that an operation is working on: an entry is created by the
/// first operation on a key and dropped when the last one finishes. Since every operation that
/// compares a key's epoch holds its entry meanwhile, an epoch never restarts under a comparison.
/// Every method is O(*k*) in the key's length (one hash) and takes one short lock.
final class MutationTracker: Sendable {
    /// A read in progress: what it saw when it began.
    struct Snapshot {
        fileprivate var key: CacheKey
        fileprivate var epoch: UInt64
        fileprivate var allEpoch: UInt64
        /// `false` when a mutation of the key was in progress as the read began.
        fileprivate var isClean: Bool
    }

    /// A mutation in progress: of one key, or of every key (`key == nil`).
    struct Ticket {
        fileprivate var key: CacheKey?
        fileprivate var epoch: UInt64
        fileprivate var allEpoch: UInt64
        fileprivate var overlapped: Bool
    }

    private struct KeyState {
        /// Mutations of the key in progress.
        var active = 0
        /// Incremented when a mutation of the key begins and when it ends.
        var epoch: UInt64 = 0
        /// Operations in progress on the key; the entry is dropped at zero.
        var holders = 0
    }

    private struct State {
        var keys: [CacheKey: KeyState] = [:]
        /// Mutations of every key (`removeAll`) in progress, and their epoch.
        var activeAll = 0
        var allEpoch: UInt64 = 0

        mutating func release(_ key: CacheKey) {
            keys[key]!.holders -= 1
            if keys[key]!.holders == 0 { keys[key] = nil }
        }
    }

    private let state = LockedValue(State())

    // MARK: - Reads

    /// Starts a read of `key` that may promote what it finds; call ``endRead(_:)`` when done.
    func beginRead(_ key: CacheKey) -> Snapshot {
        state.withLock { state in
            state.keys[key, default: KeyState()].holders += 1
            let keyState = state.keys[key]!
            return Snapshot(
                key: key, epoch: keyState.epoch, allEpoch: state.allEpoch,
                isClean: keyState.active == 0 && state.activeAll == 0)
        }
    }

    /// Whether no mutation of the key was in progress when the read began, and none has begun
    /// since.
    func isUnchanged(since snapshot: Snapshot) -> Bool {
        guard snapshot.isClean else { return false }
        return state.withLock { state in
            state.keys[snapshot.key]!.epoch == snapshot.epoch && state.allEpoch == snapshot.allEpoch
        }
    }

    /// Ends a read started with ``beginRead(_:)``.
    func endRead(_ snapshot: Snapshot) {
        state.withLock { $0.release(snapshot.key) }
    }

    // MARK: - Mutations

    /// Starts a mutation of `key`; call ``end(_:)`` when both tiers are updated.
    func begin(_ key: CacheKey) -> Ticket {
        state.withLock { state in
            var keyState = state.keys[key, default: KeyState()]
            let overlapped = keyState.active > 0 || state.activeAll > 0
            keyState.active += 1
            keyState.epoch &+= 1
            keyState.holders += 1
            state.keys[key] = keyState
            return Ticket(key: key, epoch: keyState.epoch, allEpoch: state.allEpoch, overlapped: overlapped)
        }
    }

    /// Starts a mutation of every key, such as `removeAll`.
    func beginAll() -> Ticket {
        state.withLock { state in
            let overlapped = state.activeAll > 0 || state.keys.values.contains { $0.active > 0 }
            state.activeAll += 1
            state.allEpoch &+= 1
            return Ticket(key: nil, epoch: 0, allEpoch: state.allEpoch, overlapped: overlapped)
        }
    }

    /// Ends a mutation.
    ///
    /// - Returns: Whether another mutation of the same key (or of every key) was in progress at
    ///   any moment between the start and now. The caller must then remove the key from memory.
    func end(_ ticket: Ticket) -> Bool {
        state.withLock { state in
            var overlapped = ticket.overlapped || state.allEpoch != ticket.allEpoch
            guard let key = ticket.key else {
                state.activeAll -= 1
                state.allEpoch &+= 1
                return overlapped
            }
            overlapped = overlapped || state.keys[key]!.epoch != ticket.epoch
            state.keys[key]!.active -= 1
            state.keys[key]!.epoch &+= 1
            state.release(key)
            return overlapped
        }
    }

    // MARK: - Test hooks

    /// The number of keys with state kept: those that an operation is working on.
    var trackedKeyCount: Int { state.withLock { $0.keys.count } }
}
