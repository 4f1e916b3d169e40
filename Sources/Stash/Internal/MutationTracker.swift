/// Detects when a write to one key overlapped another operation on the same key, so that the
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
/// is a *mutation* bracketed by ``begin(_:)`` / ``end(_:)``, and a read takes a ``snapshot(of:)``
/// before it reads the disk. An operation that finds, after updating the memory tier, that
/// another mutation of the same key began or ended during its own run removes the key from
/// memory: the next read then goes to disk, which holds the latest value. Removing is always
/// safe, because the disk stays authoritative.
///
/// Keys are hashed into a fixed number of stripes; two keys in one stripe only cause a
/// needless removal, never a wrong value. Every method is O(1) and takes one short lock.
final class MutationTracker: Sendable {
    /// The state of a read that may promote a value: the stripe and its epoch before the read.
    struct Snapshot {
        fileprivate var stripe: Int
        fileprivate var epoch: UInt64
    }

    /// An in-progress mutation.
    struct Ticket {
        fileprivate var stripes: Range<Int>
        fileprivate var epochs: [UInt64]
        fileprivate var overlapped: Bool
    }

    private struct Stripe {
        /// Mutations in progress.
        var active = 0
        /// Incremented when a mutation begins and when it ends.
        var epoch: UInt64 = 0
    }

    static let stripeCount = 64

    private let stripes = LockedValue([Stripe](repeating: Stripe(), count: MutationTracker.stripeCount))

    private func stripe(of key: CacheKey) -> Int {
        Int(UInt(bitPattern: key.hashValue) % UInt(Self.stripeCount))
    }

    /// The state to compare with after a disk read, or `nil` when a mutation of a key in the
    /// same stripe is in progress (the read must then not promote what it finds).
    func snapshot(of key: CacheKey) -> Snapshot? {
        let index = stripe(of: key)
        return stripes.withLock { stripes in
            stripes[index].active == 0 ? Snapshot(stripe: index, epoch: stripes[index].epoch) : nil
        }
    }

    /// Whether no mutation of a key in the snapshot's stripe has begun since the snapshot.
    func isUnchanged(since snapshot: Snapshot) -> Bool {
        stripes.withLock { $0[snapshot.stripe].epoch == snapshot.epoch }
    }

    /// Starts a mutation of `key`.
    func begin(_ key: CacheKey) -> Ticket {
        begin(stripes: stripe(of: key)..<stripe(of: key) + 1)
    }

    /// Starts a mutation of every key, such as `removeAll`.
    func beginAll() -> Ticket {
        begin(stripes: 0..<Self.stripeCount)
    }

    private func begin(stripes range: Range<Int>) -> Ticket {
        stripes.withLock { stripes in
            var overlapped = false
            var epochs: [UInt64] = []
            epochs.reserveCapacity(range.count)
            for index in range {
                overlapped = overlapped || stripes[index].active > 0
                stripes[index].active += 1
                stripes[index].epoch &+= 1
                epochs.append(stripes[index].epoch)
            }
            return Ticket(stripes: range, epochs: epochs, overlapped: overlapped)
        }
    }

    /// Ends a mutation.
    ///
    /// - Returns: Whether another mutation of a key in the same stripe was in progress at any
    ///   moment between ``begin(_:)`` and now. The caller must then remove the key from memory.
    func end(_ ticket: Ticket) -> Bool {
        stripes.withLock { stripes in
            var overlapped = ticket.overlapped
            for (index, epoch) in zip(ticket.stripes, ticket.epochs) {
                overlapped = overlapped || stripes[index].epoch != epoch
                stripes[index].active -= 1
                stripes[index].epoch &+= 1
            }
            return overlapped
        }
    }
}
