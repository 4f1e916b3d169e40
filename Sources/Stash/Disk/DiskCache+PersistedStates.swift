import Foundation

extension DiskCache {
    /// What the background write of hits last found or wrote in the index for recently read
    /// entries, so that the next batch need not read those rows again.
    ///
    /// A read that changes no policy state (an entry whose reference bit or hit counter is
    /// already set) is then written as nothing at all: no statement, not even the lookup that
    /// would find nothing to change, which at a million entries is a page of its own per read.
    ///
    /// The copy is trusted only while nothing but the hit writes themselves changed the index:
    /// it is dropped whenever the writer connection changed a row since (a store, a removal, an
    /// eviction, a move of the policy's), another connection committed (`PRAGMA data_version`),
    /// a write transaction rolled back or the writer connection was replaced
    /// (`DiskIndex.writerEpoch`), so it never disagrees with the index. Holds at most
    /// ``capacity`` entries, then starts afresh.
    struct PersistedStates {
        struct Known {
            var key: Data
            /// The row of the entry's state (valid as long as the copy is).
            var seq: Int64
            var state: PolicyState
            var accessed: Double
        }

        /// The writer's counters when the copy was last brought up to date.
        struct Marks: Equatable {
            var writerEpoch: Int
            var totalChanges: Int64
            var dataVersion: Int64
        }

        static let capacity = 1 << 16

        private var known: [Int64: Known] = [:]
        private var marks: Marks?

        /// Starts afresh unless `current` shows the index unchanged since ``seal(_:)``.
        mutating func validate(_ current: Marks) {
            guard marks != current else { return }
            known.removeAll(keepingCapacity: true)
            marks = nil
        }

        /// The entry's state as last found or written, if `key` is the key it was recorded for.
        func state(ofEntry id: Int64, key: Data) -> Known? {
            guard let entry = known[id], entry.key == key else { return nil }
            return entry
        }

        mutating func remember(_ entry: Known, forEntry id: Int64) {
            if known.count >= Self.capacity, known[id] == nil { known.removeAll(keepingCapacity: true) }
            known[id] = entry
        }

        /// Records the counters after the hit writes, which the copy now reflects.
        mutating func seal(_ current: Marks) {
            marks = current
        }
    }

    /// The writer connection's counters: the index's writer epoch (a batch written inside a
    /// transaction that then rolled back is not in the index), rows the connection changed, and
    /// commits by other connections.
    func persistedStateMarks(_ db: SQLiteConnection) throws -> PersistedStates.Marks {
        PersistedStates.Marks(
            writerEpoch: index.writerEpoch.withLock { $0 },
            totalChanges: try db.first("SELECT total_changes()") { $0.int64(0) } ?? -1,
            dataVersion: try db.first("PRAGMA data_version") { $0.int64(0) } ?? -1)
    }
}
