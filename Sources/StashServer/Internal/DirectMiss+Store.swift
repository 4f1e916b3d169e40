#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash

    extension ResponseStore {
        /// Whether a miss of `base` answered with `responseHeaders` can be stored with
        /// ``storeMiss(_:key:bodyFile:on:)``: no shared tier, a disk tier (if any) on its pool, and
        /// a response without `Vary` for a URL without a known `Vary` marker (its key is then the
        /// base key, as ``storageKey(base:requestHeaders:responseHeaders:)`` would say without a
        /// lookup).
        func storesMissDirectly(base: String, responseHeaders: HTTPHeaders) -> Bool {
            shared == nil && (disk == nil || diskPool != nil) && !responseHeaders.contains(name: "vary")
                && !hasKnownMarker(base: base)
        }

        /// Keeps a response in the memory tier (as ``keepInMemory(_:key:)`` decides) and in the
        /// disk tier, as ``store(_:key:)`` and
        /// ``store(_:key:bodyFile:)`` do, without a task: the disk store runs on ``diskPool`` and
        /// the future completes on `eventLoop` once it is done (a failure is logged, not returned:
        /// the response is still served; only the disk copy is missing).
        ///
        /// A body that the disk tier would keep in memory until its writer commits it is staged
        /// here, on the event loop, when that needs no wait (`DiskCache.storeWithoutWaiting`), and
        /// the future has then completed already.
        ///
        /// - Parameter file: The file holding the body (moved into the disk tier), when it
        ///   outgrew memory; else the body is `response`'s buffer.
        func storeMiss(_ response: CachedResponse, key: String, bodyFile file: URL?, on eventLoop: any EventLoop)
            -> EventLoopFuture<Void>
        {
            let (logger, beforeDiskStore) = (logger, beforeDiskStore)
            if let file {
                _ = memory.removeValue(forKey: key)
                guard let disk, let diskPool else {
                    try? FileManager.default.removeItem(at: file)
                    return eventLoop.makeSucceededVoidFuture()
                }
                return diskPool.runIfActive(eventLoop: eventLoop) {
                    beforeDiskStore?(key)
                    return try disk.store(fileAt: file, forKey: key, moving: true, metadata: response.metadata)
                }.recover { error in
                    logger.warning("could not store '\(key)' on disk: \(error)")
                    try? FileManager.default.removeItem(at: file)  // left over only when the store failed
                }
            }
            guard let body = response.body else { return eventLoop.makeSucceededVoidFuture() }
            keepInMemory(response, key: key)
            guard let disk, let diskPool else { return eventLoop.makeSucceededVoidFuture() }
            let data = Self.sharedData(body)
            // Built once: the pool's store below needs it too when the staging one declines (every
            // body at or above the inline threshold).
            let metadata = response.metadata
            // A body the disk tier keeps in memory until its writer commits it is staged here: no
            // trip to a disk thread and back for a store that waits for no disk (unless the
            // staging area is full, a failed commit waits to be reported, or a test holds the
            // disk stores).
            if beforeDiskStore == nil {
                do {
                    if try disk.storeWithoutWaiting(data, forKey: key, metadata: metadata) {
                        return eventLoop.makeSucceededVoidFuture()
                    }
                } catch {
                    logger.warning("could not store '\(key)' on disk: \(error)")
                    return eventLoop.makeSucceededVoidFuture()
                }
            }
            return diskPool.runIfActive(eventLoop: eventLoop) {
                beforeDiskStore?(key)
                return try disk.store(data, forKey: key, metadata: metadata)
            }.recover { error in
                logger.warning("could not store '\(key)' on disk: \(error)")
            }
        }
    }
#endif
