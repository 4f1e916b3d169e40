import Foundation
import Stash
import Synchronization

/// Issue 33's memory-tier workloads: 100 000 entries of `Int → Data`, 2 000 000 random hits per
/// thread, on 1, 2 and 4 threads sharing one structure; beside a `Mutex<[Int: Data]>` and a
/// textbook locked LRU (a dictionary of class nodes in a doubly-linked list) in the same run,
/// and as the machine's ceiling for the thread rows, a `Mutex<[Int: Data]>` per thread (`private`).
///
/// `StashBenchmarks memory-tier [--runs N] [--hits N] [--threads 1,2,4] [--only mutex,private,lru-list,…]`
/// prints one JSON line per structure and thread count: the median nanoseconds per hit per
/// thread, the hits per second of all threads together, and every run.
struct MemoryTierWorkloads {
    var runs: Int
    var entries = 100_000
    var hits = 2_000_000
    var threadCounts = [1, 2, 4]
    var only: Set<String>?

    /// Values of their own, so that two threads reading two keys never touch one reference count.
    private func makeValues() -> [Data] {
        (0..<entries).map { i in
            var data = ValueBytes.value(256)
            data[0] = UInt8(truncatingIfNeeded: i)  // A copy of its own: a buffer per value.
            return data
        }
    }

    /// Random keys in `0..<entries`, splitmix64 from a fixed seed.
    private func makeKeys(count: Int, range: Int, seed: UInt64) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(range))
        }
    }

    func wants(_ name: String) -> Bool { only?.contains(name) ?? true }

    /// Needs `Synchronization.Mutex` for the structures it compares against (macOS 15 / iOS 18).
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func run() throws -> [String] {
        let values = makeValues()
        let keys = makeKeys(count: hits, range: entries, seed: 33)
        var lines: [String] = []

        // Rounds interleave the structures, so that the machine's drift spreads over all of them.
        var samples: [String: [Timing]] = [:]
        var order: [String] = []
        func record(_ name: String, _ threads: Int, _ timing: Timing) {
            let label = "\(name)|\(threads)"
            if !order.contains(label) { order.append(label) }
            samples[label, default: []].append(timing)
        }

        let mutex = MutexDictionary()
        let ceiling = wants("private") ? PrivateDictionaries(count: threadCounts.max() ?? 1, values: makeValues) : nil
        let textbook = TextbookLRU(capacity: entries)
        let policies: [(String, MemoryEvictionPolicy)] = [
            ("memory-lru", .leastRecentlyUsed), ("memory-sieve", .sieve), ("memory-s3fifo", .s3fifo),
            ("memory-adaptive", .adaptive),
        ]
        let caches = policies.filter { wants($0.0) }.map { name, policy in
            // Room to spare: a sharded cache gives each shard an equal part of the limit, and the
            // keys do not split exactly evenly.
            (name, MemoryCache<Int, Data>(costLimit: .max / 2, countLimit: 2 * entries, policy: policy))
        }
        for i in 0..<entries {
            let value = values[i]
            mutex.store(value, i)
            textbook.store(value, i)
            for (_, cache) in caches { cache.setValue(value, forKey: i) }
        }

        for round in 0...runs {
            for threads in threadCounts {
                if wants("mutex") { record("mutex-dictionary", threads, Self.time(mutex, keys, threads)) }
                if let ceiling { record("private-dictionaries", threads, Self.time(ceiling, keys, threads)) }
                if wants("lru-list") { record("textbook-lru", threads, Self.time(textbook, keys, threads)) }
                for (name, cache) in caches { record(name, threads, Self.time(cache, keys, threads)) }
            }
            if round == 0 { samples = [:] }  // The first round warms up.
            log("stash memory-tier round \(round) of \(runs)")
        }
        for label in order {
            let parts = label.split(separator: "|")
            let threads = Int(parts[1])!
            let runs = samples[label]!
            lines.append(
                Timing.jsonLine(workload: String(parts[0]), threads: threads, entries: entries, hits: hits, runs))
        }
        return lines
    }

    /// Nanoseconds per hit of each thread: the wall time of `threads` threads each doing
    /// `keys.count` hits (from a different place in `keys`) divided by `keys.count`.
    static func time<Target: HitTarget>(_ target: Target, _ keys: [Int], _ threads: Int) -> Timing {
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let cpu = LockedLatencies()
        for t in 0..<threads {
            ready.enter()
            done.enter()
            let thread = Thread {
                let offset = t * keys.count / threads
                ready.leave()
                go.wait()
                let cpuStart = threadCPUNanoseconds()
                var found = 0
                keys.withUnsafeBufferPointer { keys in
                    for i in 0..<keys.count {
                        var index = i + offset
                        if index >= keys.count { index -= keys.count }
                        if target.hit(keys[index], thread: t) { found += 1 }
                    }
                }
                precondition(found == keys.count, "\(Target.self) missed \(keys.count - found) hits")
                cpu.append([threadCPUNanoseconds() - cpuStart])
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        ready.wait()
        let start = now()
        for _ in 0..<threads { go.signal() }
        done.wait()
        let wall = Double(now() - start) / Double(keys.count)
        return Timing(wall: wall, cpu: Double(cpu.sorted.reduce(0, +)) / Double(threads * keys.count))
    }
}

/// One timed run: wall nanoseconds per hit of each thread, and CPU nanoseconds per hit (all
/// threads' CPU time over all hits), which the machine's other load disturbs much less.
struct Timing {
    var wall: Double
    var cpu: Double

    static func jsonLine(workload: String, threads: Int, entries: Int, hits: Int, _ runs: [Timing]) -> String {
        let wall = runs.map(\.wall).sorted()
        let cpu = runs.map(\.cpu).sorted()
        let format = { (values: [Double]) in values.map { String(format: "%.1f", $0) }.joined(separator: ", ") }
        return "{\"impl\": \"stash\", \"workload\": \"\(workload)\", \"threads\": \(threads), "
            + "\"entries\": \(entries), \"hits_per_thread\": \(hits), "
            + "\"median_wall_ns_per_hit\": \(String(format: "%.1f", wall[wall.count / 2])), "
            + "\"median_cpu_ns_per_hit\": \(String(format: "%.1f", cpu[cpu.count / 2])), "
            + "\"hits_per_second\": \(Int(Double(threads) * 1e9 / wall[wall.count / 2])), "
            + "\"wall_ns\": [\(format(wall))], \"cpu_ns\": [\(format(cpu))]}"
    }
}

/// The calling thread's CPU time in nanoseconds.
func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Something a benchmark thread hits: a lookup that must find a value.
protocol HitTarget: Sendable {
    func hit(_ key: Int) -> Bool
    /// A hit by benchmark thread `thread`; the same as ``hit(_:)`` for a structure the threads share.
    func hit(_ key: Int, thread: Int) -> Bool
}

extension HitTarget {
    func hit(_ key: Int, thread: Int) -> Bool { hit(key) }
}

/// The machine's ceiling for the thread rows: each thread hits a `Mutex<[Int: Data]>` and values
/// of its own, so that the threads share nothing but the cores' caches and memory bandwidth.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class PrivateDictionaries: HitTarget {
    let dictionaries: [MutexDictionary]

    init(count: Int, values: () -> [Data]) {
        dictionaries = (0..<count).map { _ in
            let dictionary = MutexDictionary()
            for (key, value) in values().enumerated() { dictionary.store(value, key) }
            return dictionary
        }
    }

    func hit(_ key: Int) -> Bool { dictionaries[0].hit(key) }

    func hit(_ key: Int, thread: Int) -> Bool { dictionaries[thread].hit(key) }
}

extension MemoryCache: HitTarget where Key == Int, Value == Data {
    func hit(_ key: Int) -> Bool { value(forKey: key) != nil }
}

/// The floor: a dictionary behind `Synchronization.Mutex`.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class MutexDictionary: HitTarget {
    let storage = Mutex<[Int: Data]>([:])

    func store(_ value: Data, _ key: Int) { storage.withLock { $0[key] = value } }

    func hit(_ key: Int) -> Bool { storage.withLock { $0[key] } != nil }
}

/// A textbook LRU: a dictionary of class nodes threaded on a doubly-linked list, one lock.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class TextbookLRU: HitTarget {
    final class Node {
        let key: Int
        var value: Data
        var previous: Node?
        var next: Node?
        init(key: Int, value: Data) {
            self.key = key
            self.value = value
        }
    }

    struct State {
        var nodes: [Int: Node] = [:]
        var head: Node?
        var tail: Node?

        mutating func unlink(_ node: Node) {
            if let previous = node.previous { previous.next = node.next } else { head = node.next }
            if let next = node.next { next.previous = node.previous } else { tail = node.previous }
            node.previous = nil
            node.next = nil
        }

        mutating func pushFront(_ node: Node) {
            node.next = head
            head?.previous = node
            head = node
            if tail == nil { tail = node }
        }
    }

    let capacity: Int
    let state = Mutex(State())

    init(capacity: Int) { self.capacity = capacity }

    func store(_ value: Data, _ key: Int) {
        state.withLock { state in
            if let node = state.nodes[key] {
                node.value = value
                state.unlink(node)
                state.pushFront(node)
                return
            }
            let node = Node(key: key, value: value)
            state.nodes[key] = node
            state.pushFront(node)
            if state.nodes.count > capacity, let victim = state.tail {
                state.unlink(victim)
                state.nodes[victim.key] = nil
            }
        }
    }

    func hit(_ key: Int) -> Bool {
        state.withLock { state -> Data? in
            guard let node = state.nodes[key] else { return nil }
            if state.head !== node {
                state.unlink(node)
                state.pushFront(node)
            }
            return node.value
        } != nil
    }
}

// @unchecked: every field is only touched under the mutex.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
extension TextbookLRU.Node: @unchecked Sendable {}
