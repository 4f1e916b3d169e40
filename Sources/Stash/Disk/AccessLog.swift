import Foundation

/// Reads recorded in memory and written to the index in batches, so that a hit is not a
/// disk write.
///
/// Every read and every staged store or removal (``DiskCache/WriteMode/writeBehind``) takes a
/// number from one sequence, so that the writer applies the reads in request order between the
/// changes it commits, whenever it runs: the eviction decisions are then those of the policy
/// run request by request (what `EvictionSimulator` does), not those of the writer's timing.
/// Reads of a key are merged into one access with a count of hits only while no change was
/// staged in between (reads between two changes commute: a hit sets a bit, adds to counters
/// that saturate, or takes a rank after the key's earlier reads).
/// An entry of the log: hits of one key, numbered by the newest of them.
private protocol CountedAccess {
    var sequence: Int { get set }
    var hits: Int { get set }
}

struct AccessLog {
    struct Access: CountedAccess {
        var sequence: Int
        var date: Date
        var hits: Int
    }

    /// Hits served by a tier in front of the disk, for one key.
    fileprivate struct FrontTierHits: CountedAccess {
        var sequence: Int
        var hits: Int
    }

    /// Accesses taken out of the log by ``drain(at:)``, to be put in order outside its lock.
    struct Drained {
        fileprivate var pending: [Data: Access] = [:]
        fileprivate var apart: [(key: Data, access: Access)] = []
        fileprivate var frontTier: [String: FrontTierHits] = [:]
        fileprivate var frontTierApart: [(key: String, hits: FrontTierHits)] = []
        fileprivate var date: Date

        var isEmpty: Bool { pending.isEmpty && apart.isEmpty && frontTier.isEmpty && frontTierApart.isEmpty }

        /// The accesses, least recent first (front-tier hits as accesses at the drain's date):
        /// those numbered before `cutoff`, and the others.
        func inOrder(before cutoff: Int = .max) -> (
            due: [(key: Data, access: Access)], later: [(key: Data, access: Access)]
        ) {
            var all = apart
            all.reserveCapacity(apart.count + pending.count + frontTier.count + frontTierApart.count)
            for (key, access) in pending { all.append((key, access)) }
            func access(_ hits: FrontTierHits) -> Access {
                Access(sequence: hits.sequence, date: date, hits: hits.hits)
            }
            for (key, hits) in frontTier { all.append((DiskCache.utf8(key), access(hits))) }
            for (key, hits) in frontTierApart { all.append((DiskCache.utf8(key), access(hits))) }
            all.sort { $0.access.sequence < $1.access.sequence }
            guard let last = all.last, last.access.sequence > cutoff else { return (all, []) }
            let split = all.partitioningIndex { $0.access.sequence > cutoff }
            return (Array(all[..<split]), Array(all[split...]))
        }
    }

    private var pending: [Data: Access] = [:]
    /// Earlier accesses of keys read again since a change was staged: kept apart from the
    /// newer ones, so that each is applied before that change.
    private var apart: [(key: Data, access: Access)] = []
    private var sequence = 0
    /// The number of the newest staged change: reads before it are not merged with reads after.
    private var newestChange = 0
    /// Hits served by a tier in front of the disk, by key: counted only, so that recording one
    /// costs a hash lookup and nothing else, and turned into accesses when the log is drained.
    private var frontTierHits: [String: FrontTierHits] = [:]
    private var frontTierApart: [(key: String, hits: FrontTierHits)] = []

    /// Whether, and how soon, a background write of this log is scheduled.
    var schedule = AccessFlushSchedule.idle

    var count: Int { pending.count + apart.count }
    var frontTierCount: Int { frontTierHits.count + frontTierApart.count }

    /// Numbers a change being staged, after every read recorded so far.
    mutating func numberChange() -> Int {
        sequence += 1
        newestChange = sequence
        return sequence
    }

    mutating func record(_ key: Data, at date: Date, hits: Int = 1) {
        sequence += 1
        // One hash lookup: the entry is updated in place through the subscript's modify accessor.
        let earlier = Self.merge(
            hits, numbered: sequence, after: newestChange,
            into: &pending[key, default: Access(sequence: 0, date: date, hits: 0)]
        ) { $0.date = date }
        if let earlier { apart.append((key, earlier)) }
    }

    mutating func recordFrontTierHit(_ key: String, hits: Int = 1) {
        sequence += 1
        let earlier = Self.merge(
            hits, numbered: sequence, after: newestChange,
            into: &frontTierHits[key, default: FrontTierHits(sequence: 0, hits: 0)])
        if let earlier { frontTierApart.append((key, earlier)) }
    }

    /// Adds `hits` numbered `sequence` to a key's entry.
    ///
    /// Returns the entry's earlier hits when a change was staged since them (`newestChange`), for the caller to keep apart, so that they
    /// are applied before that change.
    private static func merge<Entry: CountedAccess>(
        _ hits: Int, numbered sequence: Int, after newestChange: Int, into entry: inout Entry,
        stamp: (inout Entry) -> Void = { _ in }
    ) -> Entry? {
        var earlier: Entry?
        if entry.hits > 0 && entry.sequence < newestChange {
            earlier = entry
            entry.hits = 0
        }
        entry.hits += hits
        entry.sequence = sequence
        stamp(&entry)
        return earlier
    }

    func lastAccess(of key: Data) -> Date? { pending[key]?.date }

    mutating func forget(_ key: Data) {
        pending[key] = nil
        if !frontTierHits.isEmpty { frontTierHits[String(decoding: key, as: UTF8.self)] = nil }
    }

    /// Removes and returns the recorded accesses, unordered; front-tier hits count as accesses
    /// at `date`.
    ///
    /// Cheap enough to call under the log's lock, which readers take for every hit: the caller
    /// orders the accesses (``Drained/inOrder(before:)``) after letting go of it.
    mutating func drain(at date: Date) -> Drained {
        schedule = .idle
        let drained = Drained(
            pending: pending, apart: apart, frontTier: frontTierHits, frontTierApart: frontTierApart, date: date)
        pending = Dictionary(minimumCapacity: drained.pending.count)
        apart = []
        frontTierHits = [:]
        frontTierApart = []
        return drained
    }

    /// Puts back drained accesses that are not due yet (they follow a change still staged):
    /// apart, never merged with what was recorded meanwhile, which is newer.
    mutating func putBack(_ accesses: [(key: Data, access: Access)]) {
        apart += accesses
    }
}

extension Array {
    /// The index of the first element that satisfies `belongs`, in an array where every such
    /// element follows every other (a binary search).
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

/// When the recorded accesses will next be written, so that a burst of hits schedules one
/// background write rather than one per hit.
enum AccessFlushSchedule {
    /// Nothing is scheduled (the log was empty when last drained).
    case idle
    /// A write is scheduled after ``DiskCache/Configuration/accessFlushDelay``.
    case delayed
    /// A write is queued now: the batch was full.
    case immediate
}

/// Test hooks around the background write of recorded accesses; `nil` fields do nothing.
struct AccessFlushHooks {
    /// Called on the background queue before it writes (before it takes the index's write lock).
    var willWrite: (@Sendable () -> Void)?
    /// Called on the background queue after it wrote `count` accesses (0 when another write
    /// took them first).
    var didWrite: (@Sendable (_ count: Int) -> Void)?
}
