/// Which entries a ``MemoryCache`` gives up first when it is over a limit.
///
/// Pass one to ``MemoryCache/init(costLimit:countLimit:defaultTimeToLive:entryCostLimitRatio:policy:shards:cost:clock:)``.
/// Every policy keeps every operation O(1) (eviction amortized), honours the same limits,
/// time-to-live and callbacks, and reports the same statistics; they differ only in which
/// entry goes when something must.
///
/// * ``adaptive`` (the default) sizes a recency window by the hit rate it measures and admits
///   entries to the rest of the cache by how often they were requested lately: it keeps the
///   entries read again and again through a one-off pass over many keys.
/// * ``leastRecentlyUsed`` suits workloads whose recent past predicts their near future; under
///   it every hit reorders the entries (under ``adaptive``, only a hit in the window does).
/// * ``sieve`` and ``s3fifo`` are *scan-resistant*: a one-off pass over many keys (a search
///   index rebuild, a user scrolling through a long list once) does not flush the entries that
///   are read again and again. A hit only sets a bit or bumps a small counter, so it moves no
///   entry. Pick ``sieve`` for a skewed workload that now and then sweeps through cold keys,
///   and ``s3fifo`` when most keys are read once and never again (one-hit wonders): it keeps
///   those out of the bulk of the cache altogether.
///
/// The same policies exist for the disk tier as ``EvictionPolicy``.
public struct MemoryEvictionPolicy: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case leastRecentlyUsed
        case sieve
        case s3fifo
        case adaptive
    }

    @usableFromInline let kind: Kind

    /// Evicts the entry that was read or written longest ago.
    ///
    /// Every hit moves the entry to the front of one list; the victim is the entry at the back.
    /// A scan of keys that are never read again evicts everything older than the scan.
    public static let leastRecentlyUsed = MemoryEvictionPolicy(kind: .leastRecentlyUsed)

    /// SIEVE (Zhang et al., NSDI 2024): a FIFO queue with a *visited* bit per entry and a hand.
    ///
    /// New entries join the head of the queue unvisited; a hit or a replacement marks the
    /// entry visited and moves nothing. To evict, the hand walks from where it last stopped
    /// (at first the tail, the oldest entry) towards the head, clearing the visited entries it
    /// passes, and evicts the first entry that was not visited since the hand last passed it;
    /// past the head it wraps around to the tail. Entries that are read keep their place while
    /// newcomers that are not read again are evicted soon, so a scan passes through without
    /// flushing the entries that are in use.
    public static let sieve = MemoryEvictionPolicy(kind: .sieve)

    /// S3-FIFO (Yang et al., SOSP 2023): a small FIFO queue that filters newcomers, a main FIFO
    /// queue, and a ghost queue of recently evicted keys.
    ///
    /// Each entry has a read counter that saturates at 3; a hit or a replacement increments it
    /// and moves nothing. A new entry joins the small queue, or the main queue directly if its
    /// key is in the ghost queue (it was evicted from the small queue recently and came back).
    /// The small queue's share is a tenth, rounded up, of the cost and of the count that the
    /// cache is being evicted down to (its limits, or the target of a trim or of memory
    /// pressure). While it holds more than its share, or the main queue is empty, eviction
    /// takes its oldest entry: one that was read at least once
    /// moves to the main queue with its counter reset, one that was never read is evicted and
    /// its key remembered in the ghost queue, which keeps as many keys as the main queue holds
    /// entries. Otherwise eviction takes the oldest entry of the main queue: one that was read
    /// goes back to the head with its counter decremented, one that was not is evicted.
    ///
    /// - Note: The paper's pseudo-code (Algorithm 1) and the implementation it evaluated
    ///   (libCacheSim's `S3FIFOv0`, `move-to-main-threshold=2`) move an entry from the small
    ///   to the main queue only after it was read *twice* there (`freq > 1`); the authors' blog
    ///   post illustrates the algorithm with a threshold of one read, as most ports do. This
    ///   cache moves it after *one* read (`freq > 0`), as ``EvictionPolicy/s3fifo`` in
    ///   ``DiskCache`` does, so that both tiers mean the same by the same name. With two reads
    ///   required, a value stored and then read once (a decoded image shown once per visit to
    ///   a screen, say) would leave at its first eviction and come back only after a miss, by
    ///   way of the ghost queue.
    public static let s3fifo = MemoryEvictionPolicy(kind: .s3fifo)

    /// ``EvictionPolicy/adaptive`` in memory: a window (the small queue) whose share of the
    /// cost and count a hill climber sizes from the sampled hit rate, in front of a main queue
    /// with a 2-bit CLOCK counter, and admission by a frequency sketch of recent requests.
    ///
    /// A new entry joins the window; a hit bumps its counter and feeds the sketch (with the key's
    /// hash stored with the entry: a hit does not hash the key), and moves a window entry to the
    /// window's head (the window is kept in LRU order, as on disk); a main-queue entry stays
    /// put. While the window (with the entry being stored) holds more than its share, its least
    /// recently used entry moves to the main queue if that has room, otherwise it competes with
    /// the main queue's CLOCK victims that would make room for it: it stays only if it was
    /// requested more often lately per unit of cost than all of them together (ties keep the
    /// victims), so that a costly newcomer cannot push out many cheap entries that are
    /// requested as often. An entry being stored that alone costs more than the window's share
    /// competes the same way for the room it takes from the main queue, and is not kept (it is
    /// reported to ``MemoryCache/onEviction`` as ``MemoryEvictionReason/notAdmitted``) if it
    /// loses. The
    /// window holds at least what TinyLFU's would (1 % of the cost, or 32 entries of the mean
    /// cost up to 10 %). The climber starts at half the cache, widens the window when that raises
    /// the hit rate (recency-heavy use) and narrows it otherwise, as on disk; its state lives as
    /// long as the cache. The sketch takes 16 to 32 bytes per entry.
    public static let adaptive = MemoryEvictionPolicy(kind: .adaptive)

    /// Every policy, for comparisons.
    public static let all: [MemoryEvictionPolicy] = [.leastRecentlyUsed, .sieve, .s3fifo]

    /// The policy's short name: `lru`, `sieve` or `s3-fifo`, as ``EvictionPolicy`` spells them.
    public var description: String {
        switch kind {
        case .leastRecentlyUsed: "lru"
        case .sieve: "sieve"
        case .s3fifo: "s3-fifo"
        case .adaptive: "adaptive"
        }
    }

    private init(kind: Kind) { self.kind = kind }
}
