#if Serve
    import Stash

    /// Coalesces concurrent misses of one URL: the first becomes the leader and fetches from the
    /// origin; the others wait for it to finish, then look the cache up again (nginx's
    /// `proxy_cache_lock`).
    final class FillCoordinator: Sendable {
        /// What ``begin(_:)`` decided.
        enum Role {
            /// Fetch, then call ``finish(_:)``.
            case leader
            /// Another request fetched it; look the cache up again.
            case follower
        }

        private let waiters = LockedValue([String: [CheckedContinuation<Void, Never>]]())

        /// Makes the caller the leader for `key`, or waits for the current leader to finish.
        func begin(_ key: String) async -> Role {
            if lead(key) { return .leader }
            // A leader that finished in between leaves no entry: the wait returns at once.
            await wait(key)
            return .follower
        }

        /// Makes the caller the leader for `key` if no fill of it is under way, without waiting:
        /// `false` leaves nothing to finish (``begin(_:)`` then waits for the current leader).
        func lead(_ key: String) -> Bool {
            waiters.withLock { waiters -> Bool in
                guard waiters[key] == nil else { return false }
                waiters[key] = []
                return true
            }
        }

        private func wait(_ key: String) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let queued = waiters.withLock { waiters -> Bool in
                    guard waiters[key] != nil else { return false }
                    waiters[key]!.append(continuation)
                    return true
                }
                if !queued { continuation.resume() }
            }
        }

        /// Ends the leader's fill of `key` and wakes its followers.
        func finish(_ key: String) {
            let woken = waiters.withLock { $0.removeValue(forKey: key) } ?? []
            for continuation in woken { continuation.resume() }
        }
    }
#endif
