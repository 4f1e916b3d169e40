import Foundation
import Testing

@testable import Stash

/// Interleavings of the write-behind writer with writes that take the index directly, forced
/// with the writer's test hooks.
@Suite struct WriteBehindInterleavingTests {
    /// A batch the writer commits just before a `removeAll`'s own transaction is not read back.
    ///
    /// A store staged while `removeAll` runs, committed first: once `removeAll` returns, a read
    /// must not find the staged copy of what the index no longer holds. It did, while the
    /// writer forgot a batch only after its lock: a `Cache` then kept the value in memory while
    /// its disk had none.
    @Test func aBatchCommittedBeforeARemoveAllIsNotReadAfterIt() throws {
        try withTemporaryDirectory { dir in
            let configuration = DiskCache.Configuration(writeMode: .writeBehind, maxWriteDelay: .seconds(60))
            let cache = try DiskCache(directory: dir, configuration: configuration)
            try cache.store(Data("old".utf8), forKey: "k")
            try cache.flush()
            let committed = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let flushes = DispatchGroup()
            cache.writeBehindHooks.withLock { hooks in
                hooks.removeAllWillDelete = { [unowned cache] in
                    cache.writeBehindHooks.withLock { $0.removeAllWillDelete = nil }
                    // After removeAll's own flush: staged, then committed by the writer first.
                    try? cache.store(Data("new".utf8), forKey: "k")
                    DispatchQueue.global().async(group: flushes) { try? cache.flush() }
                    committed.wait()
                }
                hooks.batchDidCommit = { [unowned cache] in
                    cache.writeBehindHooks.withLock { $0.batchDidCommit = nil }
                    committed.signal()
                    release.wait()  // the writer holds here while removeAll deletes and "k" is read
                }
            }

            try cache.removeAll()
            let afterRemoveAll = try cache.data(forKey: "k")
            release.signal()
            flushes.wait()

            #expect(afterRemoveAll == nil)
            #expect(try cache.data(forKey: "k") == nil)
            #expect(try cache.totalCount == 0)
        }
    }
}
