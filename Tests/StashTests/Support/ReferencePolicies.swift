@testable import Stash

/// A textbook, list-based eviction policy over entries of size 1, for checking `EvictionPolicy`
/// request by request.
///
/// Each reference evicts before it inserts (as the papers describe them) and holds at most
/// `capacity` keys; `request` returns whether the key was cached. They share no code with the
/// rank-based queues of `EvictionPolicy` (TinyLFU shares only its `FrequencySketch`, which
/// `FrequencySketchTests` checks on its own).
protocol ReferencePolicy {
    mutating func request(_ key: String) -> Bool
    func contains(_ key: String) -> Bool
    var count: Int { get }
}

/// LRU: a list in recency order; a hit moves the key to the back, a miss evicts the front.
struct ReferenceLRU: ReferencePolicy {
    let capacity: Int
    var keys: [String] = []

    mutating func request(_ key: String) -> Bool {
        if let position = keys.firstIndex(of: key) {
            keys.append(keys.remove(at: position))
            return true
        }
        if keys.count >= capacity { keys.removeFirst() }
        keys.append(key)
        return false
    }

    func contains(_ key: String) -> Bool { keys.contains(key) }
    var count: Int { keys.count }
}

/// FIFO: a list in insertion order; hits change nothing.
struct ReferenceFIFO: ReferencePolicy {
    let capacity: Int
    var keys: [String] = []

    mutating func request(_ key: String) -> Bool {
        if keys.contains(key) { return true }
        if keys.count >= capacity { keys.removeFirst() }
        keys.append(key)
        return false
    }

    func contains(_ key: String) -> Bool { keys.contains(key) }
    var count: Int { keys.count }
}

/// SIEVE (Zhang et al., NSDI 2024), from the paper's pseudo-code: a list from oldest to newest
/// with a visited bit each; the hand moves towards the newest entry, clearing bits, evicts the
/// first unvisited entry and stays at its newer neighbour (or returns to the oldest).
struct ReferenceSIEVE: ReferencePolicy {
    let capacity: Int
    var nodes: [(key: String, visited: Bool)] = []
    var hand: Int?

    mutating func request(_ key: String) -> Bool {
        if let position = nodes.firstIndex(where: { $0.key == key }) {
            nodes[position].visited = true
            return true
        }
        if nodes.count >= capacity { evict() }
        nodes.append((key, false))
        return false
    }

    private mutating func evict() {
        var position = hand ?? 0
        while nodes[position].visited {
            nodes[position].visited = false
            position = position + 1 < nodes.count ? position + 1 : 0
        }
        nodes.remove(at: position)
        hand = position < nodes.count ? position : nil
    }

    func contains(_ key: String) -> Bool { nodes.contains { $0.key == key } }
    var count: Int { nodes.count }
}

/// S3-FIFO (Yang et al., SOSP 2023), from the paper's pseudo-code.
///
/// A small FIFO (10 % of the capacity), a main FIFO with a 2-bit CLOCK, and a ghost FIFO of
/// keys evicted from the small queue, holding as many keys as the main queue (at least 64). A key read in the small queue moves to the main queue when it
/// reaches the small queue's head; a key found in the ghost queue is inserted into the main
/// queue. The ghost queue is consulted when the request arrives (as libCacheSim does).
struct ReferenceS3FIFO: ReferencePolicy {
    let capacity: Int
    var small: [String] = []
    var main: [String] = []
    var ghost: [String] = []
    var frequency: [String: Int] = [:]

    mutating func request(_ key: String) -> Bool {
        if let hits = frequency[key] {
            frequency[key] = min(hits + 1, 3)
            return true
        }
        let wasGhost = ghost.firstIndex(of: key).map { ghost.remove(at: $0) } != nil
        while small.count + main.count >= capacity {
            let evicted: Bool
            if small.count >= Int(Double(capacity) * 0.1) || main.isEmpty {
                evicted = evictFromSmall() || evictFromMain()
            } else {
                evicted = evictFromMain() || evictFromSmall()
            }
            if !evicted { break }
        }
        if wasGhost { main.append(key) } else { small.append(key) }
        frequency[key] = 0
        return false
    }

    private mutating func evictFromSmall() -> Bool {
        while !small.isEmpty {
            let oldest = small.removeFirst()
            if frequency[oldest]! >= 1 {
                main.append(oldest)
                frequency[oldest] = 0
            } else {
                frequency[oldest] = nil
                ghost.append(oldest)
                while ghost.count > max(main.count, 64) { ghost.removeFirst() }
                return true
            }
        }
        return false
    }

    private mutating func evictFromMain() -> Bool {
        while !main.isEmpty {
            let oldest = main.removeFirst()
            if frequency[oldest]! > 0 {
                frequency[oldest]! -= 1
                main.append(oldest)
            } else {
                frequency[oldest] = nil
                return true
            }
        }
        return false
    }

    func contains(_ key: String) -> Bool { frequency[key] != nil }
    var count: Int { frequency.count }
}

/// Stash's TinyLFU as documented.
///
/// A FIFO window of max(1 %, min(32 entries, 10 %)) of the capacity and a main FIFO with a
/// 2-bit CLOCK. When the cache overflows and the window holds
/// more than its share (or the main queue is empty), the window's oldest key either moves into
/// free room in the main queue or competes with the main queue's CLOCK victims: it is admitted
/// only if its estimated frequency exceeds theirs, otherwise evicted. One write moves at most
/// `maximumFreeMoves` keys into free room; after that a key that would move into free room
/// waits and the main queue evicts, and any other key must displace a victim. A write
/// that does not overflow moves the window's oldest keys into free room in the main queue while
/// the window holds more than its share (at most `maximumBalanceMoves` of them). Frequencies come from a
/// `FrequencySketch` that counts every request and ages on writes.
///
/// Unlike the other references it inserts first and then evicts, sparing the new key, because
/// that is the documented order: a write always lands in the window.
///
/// With `adapts` set it is the adaptive policy as documented: the sketch ages four times as
/// often, a `WindowClimber` fed every hit and miss widens the window to its share, and the
/// window is a CLOCK (a hit sets a key's bit; a candidate whose bit is set goes to the newest
/// end with its bit cleared, at most `maximumSecondChances` times per request).
struct ReferenceTinyLFU: ReferencePolicy {
    let capacity: Int
    var adapts = false
    var window: [String] = []
    var main: [String] = []
    var frequency: [String: Int] = [:]
    var sketch = FrequencySketch()

    var windowShare: Int {
        let fixed = max(Int(Double(capacity) * 0.01), min(32, Int(Double(capacity) * 0.1)))
        return adapts ? max(fixed, Int(Double(capacity) * sketch.climber.windowShare)) : fixed
    }

    mutating func request(_ key: String) -> Bool {
        let fingerprint = DiskCache.fingerprint(Array(key.utf8))
        sketch.add(fingerprint)
        if let hits = frequency[key] {
            if adapts {
                sketch.climber.recordHits(1)
                // The adaptive window is a CLOCK: a hit sets the key's reference bit.
                frequency[key] = min(hits + 1, window.contains(key) ? 1 : 3)
            } else {
                frequency[key] = min(hits + 1, 3)
            }
            return true
        }
        sketch.ageIfDue(samplesPerWord: adapts ? 2 : FrequencySketch.samplesPerWord)
        if adapts { sketch.recordClimberMiss(fingerprint) }
        window.append(key)
        frequency[key] = 0
        let count = window.count + main.count
        guard count > capacity else {
            // No eviction: the window's oldest keys move into free room in the main queue while
            // the window holds more than its share, at most `maximumBalanceMoves` of them.
            var chances = EvictionPolicy.maximumSecondChances
            for _ in 0..<EvictionPolicy.maximumBalanceMoves where window.count > windowShare {
                guard main.count < capacity - windowShare, let candidate = windowCandidate(sparing: key, &chances)
                else { break }
                window.removeAll { $0 == candidate }
                main.append(candidate)
                frequency[candidate] = 0
            }
            return false
        }
        sketch.ensureCapacity(forEntries: count)
        if adapts { sketch.regrets.setLimits(capacity: capacity, countLimit: .max, entries: count) }
        var freeMoves = 0
        var chances = EvictionPolicy.maximumSecondChances
        var isKeyDecided = false
        while window.count + main.count > capacity {
            if window.count > windowShare || main.isEmpty, let candidate = windowCandidate(sparing: key, &chances) {
                // Past the free moves, a candidate that would move into free room waits.
                let hasFreeRoom = freeMoves < EvictionPolicy.maximumFreeMoves
                if !hasFreeRoom && !main.isEmpty && main.count + 1 <= capacity - windowShare && evictFromMain() {
                    continue
                }
                if admitOrEvict(candidate, hasFreeRoom: freeMoves < EvictionPolicy.maximumFreeMoves) { freeMoves += 1 }
            } else if adapts, !isKeyDecided, window == [key], window.count > windowShare, !main.isEmpty {
                // The key being written is the whole window and alone over its share: it
                // competes for room in the main queue like any candidate, and may lose.
                isKeyDecided = true
                _ = admitOrEvict(key, hasFreeRoom: true, mainLimit: capacity)
            } else if !evictFromMain() {
                guard let oldest = window.first(where: { $0 != key }) else { break }
                window.removeAll { $0 == oldest }
                frequency[oldest] = nil
                remember(oldest, leaving: .window)
            }
        }
        return false
    }

    /// The window's oldest key other than `key`; with `adapts`, a key whose bit is set goes to
    /// the window's newest end with its bit cleared instead, while `chances` last.
    private mutating func windowCandidate(sparing key: String, _ chances: inout Int) -> String? {
        while let oldest = window.first(where: { $0 != key }) {
            guard adapts, frequency[oldest]! > 0, chances > 0 else { return oldest }
            chances -= 1
            window.removeAll { $0 == oldest }
            window.append(oldest)
            frequency[oldest] = 0
        }
        return nil
    }

    /// Returns whether `candidate` moved into free room; without `hasFreeRoom` the main queue
    /// counts as full at its current length (it must displace a victim).
    private mutating func admitOrEvict(_ candidate: String, hasFreeRoom: Bool, mainLimit limit: Int? = nil) -> Bool {
        let mainLimit = limit ?? (hasFreeRoom ? capacity - windowShare : min(capacity - windowShare, main.count))
        var victims: [String] = []
        var position = 0
        while main.count + 1 - victims.count > mainLimit && position < main.count {
            let key = main[position]
            if frequency[key]! > 0 {
                frequency[key]! -= 1
                main.append(main.remove(at: position))
            } else {
                victims.append(key)
                position += 1
            }
        }
        if main.count + 1 - victims.count <= mainLimit {
            let sketch = self.sketch
            let estimate = { (key: String) in sketch.estimate(DiskCache.fingerprint(Array(key.utf8))) }
            if victims.isEmpty || estimate(candidate) > victims.map(estimate).reduce(0, +) {
                for victim in victims {
                    main.removeAll { $0 == victim }
                    frequency[victim] = nil
                    remember(victim, leaving: .main)
                }
                window.removeAll { $0 == candidate }
                main.append(candidate)
                frequency[candidate] = 0
                return victims.isEmpty
            }
        }
        window.removeAll { $0 == candidate }
        frequency[candidate] = nil
        remember(candidate, leaving: .window)
        return false
    }

    /// With `adapts`, remembers an evicted key as a ghost of the queue it left (size 1).
    private mutating func remember(_ key: String, leaving queue: RegretLedger.Queue) {
        if adapts { sketch.regrets.remember(DiskCache.fingerprint(Array(key.utf8)), size: 1, leaving: queue) }
    }

    private mutating func evictFromMain() -> Bool {
        while !main.isEmpty {
            let oldest = main.removeFirst()
            if frequency[oldest]! > 0 {
                frequency[oldest]! -= 1
                main.append(oldest)
            } else {
                frequency[oldest] = nil
                remember(oldest, leaving: .main)
                return true
            }
        }
        return false
    }

    func contains(_ key: String) -> Bool { frequency[key] != nil }
    var count: Int { frequency.count }
}
