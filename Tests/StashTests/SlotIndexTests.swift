import Testing

@testable import Stash

/// The memory tier's open-addressing index from a key's hash tag to its slot.
@Suite struct SlotIndexTests {
    /// A lookup that accepts the slot only if it is `slot`: what a key comparison does.
    private func find(_ index: SlotIndex, tag: UInt64, slot: Int) -> Int? {
        index.slot(tag: tag) { $0 == slot }
    }

    @Test func anEmptyIndexFindsNothing() {
        let index = SlotIndex()
        #expect(index.count == 0)
        #expect(find(index, tag: 7, slot: 0) == nil)
        #expect(index.invariantViolation() == nil)
    }

    @Test func growsToKeepAQuarterFreeAndFindsEverySlot() {
        var index = SlotIndex()
        var generator = SplitMix64(seed: 33)
        var tags: [UInt64] = []
        for slot in 0..<10_000 {
            let tag = generator.next() & 0xFFFF_FFFF
            tags.append(tag)
            index.insert(tag: tag, slot: slot)
        }
        #expect(index.count == 10_000)
        // 10 000 keys at most three quarters full: 16 384 buckets.
        #expect(index.buckets.count == 16_384)
        #expect(index.invariantViolation() == nil)
        for (slot, tag) in tags.enumerated() { #expect(find(index, tag: tag, slot: slot) == slot) }
    }

    /// Keys whose tags share their low bits start probing at the same bucket; removing any of
    /// them moves the later ones back so that every other one is still found.
    @Test func removingFromARunOfCollidingKeysKeepsTheOthersReachable() {
        var index = SlotIndex()
        let tags = (0..<12).map { UInt64($0) << 20 | 5 }  // All start at bucket 5.
        for (slot, tag) in tags.enumerated() { index.insert(tag: tag, slot: slot) }
        #expect(index.buckets.count == 16)
        var remaining = Set(0..<12)
        for slot in [3, 0, 11, 6, 7, 1, 10, 2, 9, 4, 5, 8] {
            index.remove(tag: tags[slot], slot: slot)
            remaining.remove(slot)
            #expect(index.invariantViolation() == nil)
            #expect(find(index, tag: tags[slot], slot: slot) == nil)
            for other in remaining { #expect(find(index, tag: tags[other], slot: other) == other) }
        }
        #expect(index.count == 0)
        #expect(index.buckets.allSatisfy { $0 == 0 })
    }

    /// A run that starts at the last bucket wraps to the first; a removal shifts across the end.
    @Test func probesAndRemovalsWrapAroundTheEndOfTheTable() {
        var index = SlotIndex()
        let tags: [UInt64] = [15, 31, 47, 0, 14]  // Three start at bucket 15, one at 0, one at 14.
        for (slot, tag) in tags.enumerated() { index.insert(tag: tag, slot: slot) }
        #expect(index.buckets.count == 16)
        #expect(index.invariantViolation() == nil)
        index.remove(tag: 31, slot: 1)
        #expect(index.invariantViolation() == nil)
        for slot in [0, 2, 3, 4] { #expect(find(index, tag: tags[slot], slot: slot) == slot) }
        index.remove(tag: 14, slot: 4)
        index.remove(tag: 15, slot: 0)
        #expect(index.invariantViolation() == nil)
        #expect(find(index, tag: 47, slot: 2) == 2)
        #expect(find(index, tag: 0, slot: 3) == 3)
    }

    /// Two keys with the same tag are told apart by the caller's comparison.
    @Test func keysWithTheSameTagAreToldApartByTheirComparison() {
        var index = SlotIndex()
        index.insert(tag: 42, slot: 1)
        index.insert(tag: 42, slot: 2)
        #expect(find(index, tag: 42, slot: 2) == 2)
        #expect(find(index, tag: 42, slot: 1) == 1)
        #expect(find(index, tag: 42, slot: 3) == nil)
        index.remove(tag: 42, slot: 1)
        #expect(find(index, tag: 42, slot: 2) == 2)
        #expect(index.invariantViolation() == nil)
    }

    /// A seeded sequence of insertions and removals against a dictionary, checked at each step.
    @Test func matchesADictionaryUnderRandomInsertionsAndRemovals() {
        var index = SlotIndex()
        var model: [Int: UInt64] = [:]  // slot -> tag
        var generator = SplitMix64(seed: 7)
        var nextSlot = 0
        for step in 0..<20_000 {
            if model.isEmpty || generator.next() % 3 != 0 {
                // Few distinct low bits, so that runs are long and collide.
                let tag = (generator.next() & 0xFFFF_0000) | (generator.next() & 0x3F)
                index.insert(tag: tag, slot: nextSlot)
                model[nextSlot] = tag
                nextSlot += 1
            } else {
                let slot = model.keys.sorted()[Int(generator.next() % UInt64(model.count))]
                index.remove(tag: model[slot]!, slot: slot)
                model[slot] = nil
            }
            #expect(index.count == model.count)
            if step % 500 == 0 {
                #expect(index.invariantViolation() == nil)
                for (slot, tag) in model { #expect(find(index, tag: tag, slot: slot) == slot) }
            }
        }
        #expect(index.invariantViolation() == nil)
    }
}
