#if Serve
    import Foundation

    /// A disk-tier read held up on its disk thread until the test releases it: as the server's
    /// `beforeDiskRead` hook (or a response store's `afterDiskRead`), it stops the first read of a
    /// key that ends with ``suffix``; as `beforeDiskStore`, the first store of one.
    final class HeldDiskRead: Sendable {
        /// The end of the key whose first read is held.
        let suffix: String
        private let semaphore = DispatchSemaphore(value: 0)
        private let started = Locked(false)

        init(suffix: String) {
            self.suffix = suffix
        }

        /// The hook for `ProxyServer.Configuration.beforeDiskRead` or `ResponseStore.afterDiskRead`.
        var hook: @Sendable (String) -> Void {
            { [self] key in
                guard key.hasSuffix(suffix) else { return }
                let isFirst = started.withLock { started in
                    defer { started = true }
                    return !started
                }
                if isFirst { semaphore.wait() }
            }
        }

        /// Whether the held read has started (and waits).
        var isHolding: Bool { started.withLock { $0 } }

        /// Lets the held read go on.
        func release() { semaphore.signal() }
    }
#endif
