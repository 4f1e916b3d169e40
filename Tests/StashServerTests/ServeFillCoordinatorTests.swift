#if Serve
    import Foundation
    @testable import StashServer
    import Testing

    /// An invalidation (RFC 9111 §4.4) and the store of a fill of the same URL: the store begins
    /// only before the invalidation, and the invalidation returns only after that store ended, so
    /// that what the store left can be removed before the invalidation's request is answered.
    @Suite struct ServeFillCoordinatorTests {
        /// An invalidation that marks a fill while it is storing waits until the store ends; no
        /// store of that fill begins after the mark.
        @Test(arguments: [false, true])
        func anInvalidationWaitsForTheStoreUnderWay(byPrefix: Bool) async throws {
            let fills = FillCoordinator()
            #expect(fills.lead("/a/doc"))
            let store = try #require(fills.beginStore("/a/doc"))
            let returned = Locked(false)
            let invalidation = Task {
                if byPrefix {
                    await fills.invalidate(keysStartingWith: "/a/") {}
                } else {
                    await fills.invalidate("/a/doc") {}
                }
                returned.withLock { $0 = true }
            }
            #expect(await eventually { fills.wasInvalidated(store) })
            #expect(fills.beginStore("/a/doc") == nil)
            // Time for an invalidation that does not wait to return: the pause can let the test
            // miss that bug, never fail on correct code.
            try await Task.sleep(for: .milliseconds(100))
            #expect(!returned.withLock { $0 })
            fills.endStore(store)
            await invalidation.value
            #expect(returned.withLock { $0 })
            fills.finish("/a/doc")
        }

        /// An invalidation of a URL with no store under way returns at once, and a store that
        /// belongs to no fill (nothing to mark) is never refused.
        @Test func anInvalidationWithNoStoreUnderWayDoesNotWait() async throws {
            let fills = FillCoordinator()
            await fills.invalidate("/idle") {}
            let untracked = try #require(fills.beginStore("/idle"))
            #expect(!fills.wasInvalidated(untracked))
            #expect(fills.lead("/doc"))
            await fills.invalidate("/doc") {}
            #expect(fills.beginStore("/doc") == nil)
            fills.finish("/doc")
            fills.endStore(untracked)
        }

        /// A fill that begins while an invalidation of its URL (or of a prefix of it) is removing
        /// what the tiers hold stores nothing.
        ///
        /// It may have read a tier the invalidation had not cleaned yet. A fill that begins after
        /// the invalidation returned stores, and a fill of another URL is not touched.
        @Test(arguments: [false, true])
        func aFillThatBeginsWhileAnInvalidationRemovesStoresNothing(byPrefix: Bool) async throws {
            let fills = FillCoordinator()
            let removing = Gate()
            let removalStarted = Locked(false)
            let invalidation = Task {
                let remove = {
                    removalStarted.withLock { $0 = true }
                    await removing.wait()
                }
                if byPrefix {
                    await fills.invalidate(keysStartingWith: "/a/", removing: remove)
                } else {
                    await fills.invalidate("/a/doc", removing: remove)
                }
            }
            #expect(await eventually { removalStarted.withLock { $0 } })
            #expect(fills.lead("/a/doc"))
            #expect(fills.beginStore("/a/doc") == nil)
            #expect(fills.lead("/b/doc"))
            let other = try #require(fills.beginStore("/b/doc"))
            #expect(!fills.wasInvalidated(other))
            fills.endStore(other)
            fills.finish("/b/doc")
            removing.open()
            await invalidation.value
            // The fill that began during the invalidation stays marked until it ends.
            #expect(fills.beginStore("/a/doc") == nil)
            fills.finish("/a/doc")
            #expect(fills.lead("/a/doc"))
            let after = try #require(fills.beginStore("/a/doc"))
            #expect(!fills.wasInvalidated(after))
            fills.endStore(after)
            fills.finish("/a/doc")
        }

        /// A store that began in a fill which has ended since is not counted against the next fill
        /// of the URL: an invalidation of that fill does not wait for it.
        @Test func aStoreOfAnEndedFillDoesNotHoldTheNextOne() async throws {
            let fills = FillCoordinator()
            #expect(fills.lead("/doc"))
            let old = try #require(fills.beginStore("/doc"))
            fills.finish("/doc")
            #expect(fills.lead("/doc"))
            fills.endStore(old)
            await fills.invalidate("/doc") {}
            #expect(fills.beginStore("/doc") == nil)
            #expect(!fills.wasInvalidated(old))
            fills.finish("/doc")
        }
    }
#endif
