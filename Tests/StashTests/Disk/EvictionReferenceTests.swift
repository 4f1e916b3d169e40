import Foundation
import Testing

@testable import Stash

/// Each policy against a small textbook implementation, request by request, on random traces
/// of entries of size 1 with `lowWaterMark` 1.0 (so that "full" means one entry too many).
@Suite struct EvictionReferenceTests {
    /// A skewed key stream (popular keys and a long tail) with runs of never-repeated keys, so
    /// that recency, frequency, ghosts and scans all matter.
    private static func trace(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        var scanned = 0
        var keys: [String] = []
        while keys.count < count {
            if Int.random(in: 0..<50, using: &random) == 0 {
                for _ in 0..<Int.random(in: 5...40, using: &random) {
                    scanned += 1
                    keys.append("scan-\(scanned)")
                }
                continue
            }
            let u = Double.random(in: 0..<1, using: &random)
            keys.append("key-\(Int(u * u * u * 300))")
        }
        return Array(keys.prefix(count))
    }

    private static func reference(for policy: EvictionPolicy, capacity: Int) -> any ReferencePolicy {
        switch policy {
        case .leastRecentlyUsed: ReferenceLRU(capacity: capacity)
        case .firstInFirstOut: ReferenceFIFO(capacity: capacity)
        case .sieve: ReferenceSIEVE(capacity: capacity)
        case .s3fifo: ReferenceS3FIFO(capacity: capacity)
        case .adaptive: ReferenceTinyLFU(capacity: capacity, adapts: true)
        default: ReferenceTinyLFU(capacity: capacity)  // both objectives: with size 1 they agree
        }
    }

    @Test(arguments: EvictionPolicy.all, [3, 20, 100])
    func policyMakesTheSameDecisionsAsItsTextbookReference(policy: EvictionPolicy, capacity: Int) throws {
        for seed in [1, 2] as [UInt64] {
            var reference = Self.reference(for: policy, capacity: capacity)
            var simulator = EvictionSimulator(
                policy: policy, limits: EvictionLimits(sizeLimit: capacity, countLimit: nil, lowWaterMark: 1.0))
            let requests = Self.trace(count: 6000, seed: seed)
            var recent: [String] = []
            var hits = 0
            for (step, key) in requests.enumerated() {
                let expected = reference.request(key)
                let actual = try simulator.request(key: key, size: 1)
                if expected { hits += 1 }
                recent.append(key)
                if recent.count > 4 * capacity + 20 { recent.removeFirst() }
                // Every key that could still be cached must agree, not only the one requested.
                let disagreeing = recent.first { reference.contains($0) != simulator.contains($0) }
                guard expected == actual, disagreeing == nil, simulator.index.evictable.count == reference.count
                else {
                    Issue.record(
                        """
                        \(policy), capacity \(capacity), seed \(seed), request \(step) '\(key)': reference hit \
                        \(expected), policy hit \(actual); first disagreeing key: \(disagreeing ?? "none")
                        """)
                    return
                }
            }
            #expect(hits > 100 && hits < 5900, "\(policy) capacity \(capacity): \(hits) hits, both outcomes needed")
        }
    }
}
