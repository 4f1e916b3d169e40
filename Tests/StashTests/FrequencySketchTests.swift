import Testing

@testable import Stash

@Suite struct FrequencySketchTests {
    private func fingerprints(_ count: Int, seed: UInt64) -> [Int64] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in Int64(bitPattern: random.next()) }
    }

    /// Both layouts: DiskCache's (four independent words) and the memory tier's (one block).
    @Test(arguments: [false, true])
    func estimatesNeverUndercountAndAreMostlyExactWhenTheTableIsWide(isBlocked: Bool) {
        var sketch = FrequencySketch(entries: 1000, isBlocked: isBlocked)
        var random = SplitMix64(seed: 5)
        let keys = fingerprints(300, seed: 1)
        var truth: [Int64: Int] = [:]
        for key in keys {
            let count = Int.random(in: 1...12, using: &random)
            sketch.add(key, count: count)
            truth[key] = count
        }
        let exact = keys.filter { sketch.estimate($0) == truth[$0]! }.count
        #expect(keys.allSatisfy { sketch.estimate($0) >= truth[$0]! })
        #expect(exact >= 290, "\(exact) of 300 exact")
        #expect(sketch.estimate(424_242) <= 1)
    }

    /// The memory tier's layout puts a key's four counters in one block of eight words.
    @Test func theBlockedLayoutKeepsAKeysCountersInOneBlock() {
        var sketch = FrequencySketch(entries: 1000, isBlocked: true)
        for key in fingerprints(100, seed: 8) {
            let before = sketch.words
            sketch.add(key)
            let changed = sketch.words.indices.filter { sketch.words[$0] != before[$0] }
            #expect(!changed.isEmpty)
            #expect(Set(changed.map { $0 / 8 }).count == 1, "words \(changed)")
        }
    }

    /// The memory tier's hit path gives the same table as adding one request at a time.
    @Test func addingOneToABlockEqualsAddingOne() {
        var fast = FrequencySketch(entries: 100, isBlocked: true)
        var plain = FrequencySketch(entries: 100, isBlocked: true)
        var random = SplitMix64(seed: 11)
        let keys = fingerprints(50, seed: 10)
        for _ in 0..<2000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            fast.addOneToBlock(key)
            plain.add(key)
        }
        #expect(fast.words == plain.words)
        #expect(fast.additions == plain.additions)
        #expect(keys.contains { fast.estimate($0) == 15 })
    }

    @Test func countersStopAtFifteen() {
        var sketch = FrequencySketch()
        sketch.add(7, count: 40)
        sketch.add(7)
        #expect(sketch.estimate(7) == 15)
    }

    @Test func addingACountEqualsAddingOneAtATimeInAnyOrder() {
        let keys = fingerprints(200, seed: 2)
        var batched = FrequencySketch(entries: 50)
        var oneByOne = FrequencySketch(entries: 50)
        var random = SplitMix64(seed: 3)
        var requests: [Int64] = []
        for key in keys {
            let count = Int.random(in: 1...20, using: &random)
            batched.add(key, count: count)
            requests += Array(repeating: key, count: count)
        }
        requests.shuffle(using: &random)
        for key in requests { oneByOne.add(key) }
        #expect(batched == oneByOne)
    }

    @Test func agingHalvesEveryCounterOnceTheSampleIsFull() {
        var sketch = FrequencySketch()
        let keys = fingerprints(10, seed: 4)
        for key in keys { sketch.add(key, count: 9) }
        let before = keys.map(sketch.estimate)
        sketch.ageIfDue()
        #expect(keys.map(sketch.estimate) == before)  // not due yet
        sketch.add(99, count: sketch.sampleSize)
        sketch.ageIfDue()
        #expect(keys.map(sketch.estimate) == before.map { $0 / 2 })
        #expect(sketch.additions == (90 + sketch.sampleSize) / 2)
    }

    @Test(arguments: [false, true])
    func wideningKeepsEveryEstimate(isBlocked: Bool) {
        var sketch = FrequencySketch(entries: 10, isBlocked: isBlocked)
        let keys = fingerprints(400, seed: 6)
        for (position, key) in keys.enumerated() { sketch.add(key, count: position % 7 + 1) }
        let before = keys.map(sketch.estimate)
        let words = sketch.words.count
        sketch.ensureCapacity(forEntries: 5000)
        #expect(sketch.words.count >= 5000 * sketch.entryWords)
        #expect(sketch.words.count > words)
        #expect(keys.map(sketch.estimate) == before)
        sketch.ensureCapacity(forEntries: 10)  // never shrinks
        #expect(sketch.words.count >= 5000 * sketch.entryWords)
    }

    @Test func recordsWhichChunksChangedForPersistence() throws {
        var sketch = FrequencySketch(entries: 1000, tracksChanges: true)
        #expect(sketch.changedChunks.isEmpty)
        sketch.add(1)
        #expect(!sketch.changedChunks.isEmpty && sketch.changedChunks.count <= 4)
        sketch.markSaved()
        #expect(sketch.changedChunks.isEmpty)
        sketch.ensureCapacity(forEntries: 2000)
        #expect(sketch.changedChunks.count == sketch.words.count / FrequencySketch.wordsPerChunk)
        let restored = try #require(FrequencySketch(words: sketch.words, additions: sketch.additions))
        #expect(restored.estimate(1) == 1)
        #expect(FrequencySketch(words: [1, 2, 3], additions: 0) == nil)
    }
}
