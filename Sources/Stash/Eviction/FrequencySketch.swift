import CStashVFS

/// A count-min sketch of 4-bit counters: how often each key was requested lately (TinyLFU,
/// Einziger, Friedman and Manes, ACM Transactions on Storage, 2017).
///
/// Each key, given as its 64-bit fingerprint, has four counters at hashed positions in one
/// table; its estimate is the smallest of the four, which can only overestimate. Every
/// `sampleSize` additions all counters are halved, so that the sketch forgets old popularity.
///
/// The table has 8 to 16 words (128 to 256 counters) per cached entry, more than Caffeine's
/// one word: with fewer, collisions hid the difference between the entries at the edge of a
/// cache on the Zipf traces in `Benchmarks/POLICIES.md` (see there for the measurements), and
/// the halving period is 8 additions per word, so that those entries count up to a few
/// units between halvings without saturating at 15.
///
/// Additions commute: adding `n` to a key is the same as adding 1 `n` times, in any order
/// with other keys' additions. Only `ageIfDue` and `ensureCapacity` depend on when they run,
/// so the eviction policy calls them at points that a replay and DiskCache share (a write),
/// and DiskCache may apply batched hits later than they happened without changing a decision.
package struct FrequencySketch: Hashable, Sendable {
    /// Words are persisted in chunks of this many, so that a change rewrites one chunk.
    package static let wordsPerChunk = 128
    /// The smallest table: 64 words of 16 counters.
    package static let minimumWords = 64
    /// The largest table: 2²⁰ words (8 MiB), full width up to about 128 000 entries.
    package static let maximumWords = 1 << 20
    /// Table words per entry the table is sized for (rounded up to a power of two).
    package static let wordsPerEntry = 8
    /// Table words per entry in the blocked layout: its table is a quarter as large, so that the
    /// memory tier's sketch stays in the processor's cache (a hit reads one block of it).
    package static let blockedWordsPerEntry = 2
    /// Additions between two halvings, per word of the table.
    package static let samplesPerWord = 8

    /// The table: each 64-bit word holds sixteen 4-bit counters.
    package private(set) var words: [UInt64]
    /// Additions since the counters were last halved.
    package private(set) var additions: Int
    /// Chunks (`word / wordsPerChunk`) changed since `markSaved()`.
    package private(set) var changedChunks: Set<Int> = []
    /// Whether changes are recorded in `changedChunks` (only DiskCache persists them).
    private let tracksChanges: Bool
    /// Whether a key's four counters share one 64-byte block of eight words (the memory tier's
    /// layout: one hash and one cache line per request) rather than lying in four independent
    /// words of the whole table (DiskCache's persisted layout).
    private let isBlocked: Bool
    /// The ``EvictionPolicy/adaptive`` policy's window sizing, kept and persisted with the
    /// sketch because both are the policy's shared, approximate memory of recent requests.
    package var climber = WindowClimber()
    /// The climber's evidence: ghosts of evicted entries and the regrets of misses on them.
    ///
    /// Kept in memory only, never persisted (see ``RegretLedger``).
    package var regrets = RegretLedger()

    /// An empty sketch for about `entries` entries; `isBlocked` chooses the memory tier's
    /// layout (four counters in one 64-byte block), which is never persisted.
    package init(entries: Int = 0, tracksChanges: Bool = false, isBlocked: Bool = false) {
        self.words = Array(
            repeating: 0,
            count: Self.wordCount(
                forEntries: entries, perEntry: isBlocked ? Self.blockedWordsPerEntry : Self.wordsPerEntry))
        self.additions = 0
        self.tracksChanges = tracksChanges
        self.isBlocked = isBlocked
    }

    /// A sketch restored from persisted words, or `nil` when `words` is not a table this type writes.
    package init?(words: [UInt64], additions: Int, tracksChanges: Bool = false) {
        guard words.count >= Self.minimumWords, words.count <= Self.maximumWords,
            words.count & (words.count - 1) == 0, additions >= 0
        else { return nil }
        self.words = words
        self.additions = additions
        self.tracksChanges = tracksChanges
        self.isBlocked = false
    }

    /// Additions after which the counters are halved.
    package var sampleSize: Int { words.count * Self.samplesPerWord }

    /// Requests per sample of the window climber: about `climberSamplesPerEntry` per entry the
    /// table is sized for, at least `minimumClimberSample`.
    package var climberSampleSize: Int {
        max(Self.minimumClimberSample, words.count / entryWords * Self.climberSamplesPerEntry)
    }

    /// Table words per entry the table is sized for: ``wordsPerEntry``, or
    /// ``blockedWordsPerEntry`` in the blocked layout.
    package var entryWords: Int {
        isBlocked ? Self.blockedWordsPerEntry : Self.wordsPerEntry
    }

    /// Counts a miss of `fingerprint` for the window climber: first a regret, if an eviction
    /// the ledger remembers caused it, then a request of the climber's sample, which may end
    /// the sample and move the window.
    package mutating func recordClimberMiss(_ fingerprint: Int64) {
        regrets.recordMiss(of: fingerprint)
        let sampleSize = climberSampleSize
        climber.recordMiss(sampleSize: sampleSize, regrets: &regrets)
    }

    /// Climber samples per entry the table is sized for.
    package static let climberSamplesPerEntry = 2
    /// The shortest climber sample, in requests.
    package static let minimumClimberSample = 256

    /// How often `fingerprint` was added recently, from 0 to 15.
    package func estimate(_ fingerprint: Int64) -> Int {
        var result: UInt64 = 15
        let mixed = isBlocked ? Self.mix(UInt64(bitPattern: fingerprint)) : 0
        for row in 0..<4 {
            let (word, shift) = isBlocked ? blockedPosition(of: mixed, row: row) : position(of: fingerprint, row: row)
            result = min(result, (words[word] >> shift) & 0xF)
        }
        return Int(result)
    }

    /// Adds `count` requests of `fingerprint`; each counter stops at 15.
    package mutating func add(_ fingerprint: Int64, count: Int = 1) {
        guard count > 0 else { return }
        let mixed = isBlocked ? Self.mix(UInt64(bitPattern: fingerprint)) : 0
        for row in 0..<4 {
            let (word, shift) = isBlocked ? blockedPosition(of: mixed, row: row) : position(of: fingerprint, row: row)
            let value = (words[word] >> shift) & 0xF
            let raised = UInt64(min(15, Int(value) + count))
            if raised != value {
                words[word] = words[word] & ~(0xF << shift) | raised << shift
                if tracksChanges { changedChunks.insert(word / Self.wordsPerChunk) }
            }
        }
        additions += count
    }

    /// Adds one request of `fingerprint` to a sketch in the blocked layout: ``add(_:count:)``
    /// with a count of 1, in one pass over the key's block (the memory tier's hit path).
    package mutating func addOneToBlock(_ fingerprint: Int64) {
        precondition(isBlocked && !tracksChanges, "only the memory tier's blocked sketch")
        let blockMask = words.count / 8 - 1
        words.withUnsafeMutableBufferPointer { Self.addOne(fingerprint, toBlockOf: $0, blockMask: blockMask) }
        additions += 1
    }

    /// ``addOneToBlock(_:)`` for each of `fingerprints`, in order, in one pass over the table
    /// (the memory tier's replay of buffered hits).
    package mutating func addOneToBlocks(_ fingerprints: UnsafeBufferPointer<UInt32>) {
        precondition(isBlocked && !tracksChanges, "only the memory tier's blocked sketch")
        let blockMask = words.count / 8 - 1
        words.withUnsafeMutableBufferPointer { table in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: fingerprints.count) { mixed in
                // The blocks are fetched first, all at once, so that their cache misses overlap
                // instead of coming one per hit.
                for index in fingerprints.indices {
                    mixed[index] = Self.mix(UInt64(fingerprints[index]))
                    stash_prefetch_for_writing(
                        table.baseAddress! + (Int(truncatingIfNeeded: mixed[index]) & blockMask) &* 8)
                }
                for index in fingerprints.indices {
                    Self.addOne(mixed: mixed[index], toBlockOf: table, blockMask: blockMask)
                }
            }
        }
        additions += fingerprints.count
    }

    /// Adds one to each of the four counters of `fingerprint` in its 64-byte block of `table`.
    @inline(__always)
    private static func addOne(
        _ fingerprint: Int64, toBlockOf table: UnsafeMutableBufferPointer<UInt64>, blockMask: Int
    ) {
        addOne(mixed: mix(UInt64(bitPattern: fingerprint)), toBlockOf: table, blockMask: blockMask)
    }

    /// ``addOne(_:toBlockOf:blockMask:)`` for a fingerprint already mixed.
    @inline(__always)
    private static func addOne(
        mixed: UInt64, toBlockOf table: UnsafeMutableBufferPointer<UInt64>, blockMask: Int
    ) {
        // Masking shifts (`&>>`, `&<<`; every amount is below 64): Swift's `>>` by a variable
        // amount checks for an overshift, a third of this loop's instructions.
        let base = (Int(truncatingIfNeeded: mixed) & blockMask) &* 8
        for row in 0..<4 {
            let word = base &+ Int(truncatingIfNeeded: mixed &>> UInt64(32 &+ 3 &* row)) & 7
            let shift = ((mixed &>> UInt64(44 &+ 4 &* row)) & 0xF) &<< 2
            // Without a branch: whether a counter is saturated is a coin toss the processor
            // cannot predict.
            let value = table[word]
            table[word] = value &+ ((((value &>> shift) & 0xF) == 0xF ? 0 : 1) &<< shift)
        }
    }

    /// Halves every counter once `samplesPerWord` additions per table word (`sampleSize` by
    /// default) have accumulated since the last time.
    package mutating func ageIfDue(samplesPerWord: Int = Self.samplesPerWord) {
        guard additions >= words.count * samplesPerWord else { return }
        for index in words.indices { words[index] = (words[index] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
        markEverythingChanged()
    }

    /// Widens the table for `entries` entries.
    ///
    /// Doubling keeps every estimate: a key's counter in the wider table is at index `i` or
    /// `i + oldCount`, and both start as copies of the old word `i`.
    package mutating func ensureCapacity(forEntries entries: Int) {
        let wanted = Self.wordCount(forEntries: entries, perEntry: entryWords)
        guard wanted > words.count else { return }
        // The doublings at once: word `i` of the wider table is word `i % count` of this one.
        // (Doubling one step at a time, a sketch widened from its 64 words to a million
        // entries' copied twice its final 8 MiB through 14 arrays.)
        let old = words
        words = [UInt64](unsafeUninitializedCapacity: wanted) { buffer, initialized in
            old.withUnsafeBufferPointer { source in
                var start = 0
                while start < wanted {
                    let count = min(source.count, wanted - start)
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[start..<start + count]).initialize(
                        fromContentsOf: UnsafeBufferPointer(rebasing: source[0..<count]))
                    start += count
                }
            }
            initialized = wanted
        }
        markEverythingChanged()
    }

    /// Forgets which chunks changed (after they were written).
    package mutating func markSaved() { changedChunks.removeAll(keepingCapacity: true) }

    private mutating func markEverythingChanged() {
        guard tracksChanges else { return }
        changedChunks = Set(0..<((words.count + Self.wordsPerChunk - 1) / Self.wordsPerChunk))
    }

    private static func wordCount(forEntries entries: Int, perEntry: Int) -> Int {
        let wanted = min(max(0, entries), maximumWords) * perEntry
        var count = minimumWords
        while count < wanted && count < maximumWords { count *= 2 }
        return count
    }

    /// The blocked layout's word and bit offset for `row`, from the fingerprint mixed once: the
    /// low bits pick a block of eight words (so doubling the table splits each block in two, as
    /// it splits words), then three bits per row the word within the block (bits 32–43) and
    /// four the counter within the word (bits 44–59).
    @inline(__always)
    private func blockedPosition(of mixed: UInt64, row: Int) -> (word: Int, shift: UInt64) {
        let block = Int(truncatingIfNeeded: mixed) & (words.count / 8 - 1)
        let word = Int(truncatingIfNeeded: mixed >> UInt64(32 + 3 * row)) & 7
        return (block * 8 + word, ((mixed >> UInt64(44 + 4 * row)) & 0xF) << 2)
    }

    /// A SplitMix64 finaliser: spreads a fingerprint's bits over all 64.
    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &+ 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    /// The word and bit offset of `fingerprint`'s counter for `row`: a SplitMix64 step per row
    /// makes the four positions independent; the low bits pick the word (so doubling the table
    /// splits each word in two), the top four bits the counter within it.
    @inline(__always)
    private func position(of fingerprint: Int64, row: Int) -> (word: Int, shift: UInt64) {
        var x = UInt64(bitPattern: fingerprint) &+ UInt64(row + 1) &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        x ^= x >> 31
        return (Int(truncatingIfNeeded: x) & (words.count - 1), (x >> 60) << 2)
    }
}
