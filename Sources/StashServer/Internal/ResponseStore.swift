#if Serve
    import Foundation
    import Logging
    import NIOConcurrencyHelpers
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The proxy's cache chain, memory → disk → shared, with its key scheme.
    ///
    /// A URL's responses live under a base key, `serve ORIGIN TARGET`. A response with `Vary` lives under
    /// a variant key made of the base key, the URL's variant generation and the request's values of the
    /// `Vary` fields; a marker under `serve-vary BASE` records the field names and the generation, so that
    /// several variants of one URL are kept side by side (RFC 9111 §4.1). Invalidating a URL removes its
    /// base entry and its marker: the old generation's variants are then unreachable and age out.
    final class ResponseStore: Sendable {
        /// Which tier answered a lookup.
        enum Tier: String, Sendable {
            case memory
            case disk
            case shared
        }

        /// A stored response found by ``lookUp(base:requestHeaders:)``.
        struct Found: Sendable {
            var response: CachedResponse
            var tier: Tier
            var key: String
            /// The disk-tier file holding the body, for a body too large for memory.
            var file: URL?
            /// The disk-tier entry the response was read from, when its body was left in its value
            /// file: ``DiskCache/Entry/fileDescriptor`` is open on that file (the entry's own,
            /// even if the key is overwritten meanwhile) for as long as this is kept.
            var entry: DiskCache.Entry?
        }

        struct VaryMarker: Sendable, Equatable {
            var names: [String]
            var generation: String
        }

        let memory: MemoryCache<String, CachedResponse>
        /// Heads decoded from disk-tier entries, reused while an entry keeps its stored text.
        let heads: DiskHeads
        let disk: DiskCache?
        let shared: (any SharedTier)?
        /// Bodies up to this length are kept in the memory tier.
        let memoryItemLimit: Int
        /// Bodies up to this length enter the memory tier with a miss or from the disk tier.
        ///
        /// It is ``memoryItemLimit``, and with a disk tier at most ``MemoryFootprint/mmapThreshold``.
        /// A larger body (up to ``memoryItemLimit``) enters only into free room (see
        /// ``keepInMemory(_:key:)``).
        ///
        /// A larger body gets pages of its own (an `mmap`, a fault per page, an `munmap` when it
        /// is evicted): evicting many smaller ones for it would cost more than `sendfile` from the
        /// disk tier's file, at about the cost per byte of a memory hit. While memory has room (a
        /// working set that fits), it saves every hit the disk thread's trip, the index read and
        /// the open.
        let memoryBodyLimit: Int
        /// Bodies up to this length are written to the shared tier.
        let sharedItemLimit: Int
        let logger: Logger
        /// The bounded pool that runs the disk tier's stores and the reads of exchanges (the
        /// direct disk hits run on ``diskReader``), so that neither an event loop nor a Swift
        /// concurrency thread waits for SQLite or the disk; `nil`: on the caller.
        let diskPool: NIOThreadPool?
        /// The threads that run the direct disk-hit reads (``diskRead(base:requestHeaders:on:completion:)``)
        /// and hand their answers back to the event loops in batches; `nil`: on ``diskPool``.
        let diskReader: DiskHitReader?
        /// Called before each disk-tier read (a test's injected delay).
        let beforeDiskRead: (@Sendable (String) -> Void)?
        /// Called after a disk-tier read found an entry, before it is copied into memory (a
        /// test's injected delay).
        let afterDiskRead: (@Sendable (String) -> Void)?
        /// Called on the disk thread before a miss's disk-tier store in
        /// ``storeMiss(_:key:bodyFile:on:)`` (a test's injected delay).
        let beforeDiskStore: (@Sendable (String) -> Void)?
        private let origin: String
        /// What this process knows of each URL's `Vary` marker (bounded: see ``VaryMarkers``).
        private let markers: VaryMarkers
        /// The fills under way, by base key: misses coalesce on them, and an invalidation marks
        /// them (``invalidate(base:)``).
        let fills = FillCoordinator()

        init(
            origin: URL, memoryLimit: Int, disk: DiskCache?, shared: (any SharedTier)?, sharedItemLimit: Int,
            logger: Logger, diskPool: NIOThreadPool? = nil, diskReader: DiskHitReader? = nil,
            beforeDiskRead: (@Sendable (String) -> Void)? = nil, afterDiskRead: (@Sendable (String) -> Void)? = nil,
            beforeDiskStore: (@Sendable (String) -> Void)? = nil
        ) {
            self.beforeDiskStore = beforeDiskStore
            self.diskReader = diskReader
            self.beforeDiskRead = beforeDiskRead
            self.afterDiskRead = afterDiskRead
            self.origin = origin.absoluteString
            self.memoryItemLimit = max(0, memoryLimit / 8)
            self.markers = VaryMarkers(
                plainLimit: min(Self.maximumPlainURLs, max(Self.minimumPlainURLs, memoryLimit / Self.bytesPerPlainURL)))
            self.memoryBodyLimit =
                disk == nil ? memoryItemLimit : min(memoryItemLimit, Int(MemoryFootprint.mmapThreshold))
            // The heads of disk entries take a sixteenth of the limit, the memory tier the rest
            // (its largest entry is still an eighth of the whole limit).
            let headLimit = disk == nil ? 0 : memoryLimit / Self.headShare
            self.heads = DiskHeads(costLimit: headLimit)
            let tierLimit = memoryLimit - headLimit
            self.memory = MemoryCache(
                costLimit: tierLimit,
                entryCostLimitRatio: tierLimit > 0 ? min(1, Double(memoryLimit) * 0.125 / Double(tierLimit)) : 0.125,
                cost: { $0.memoryCost })
            self.diskPool = diskPool
            self.disk = disk
            self.shared = shared
            self.sharedItemLimit = sharedItemLimit
            self.logger = logger
        }

        /// The share of the memory limit that ``heads`` may take: one part in this many.
        static let headShare = 16

        /// Bytes of the bodies of misses whose clients got the end of their response before the
        /// disk tier's store of it ended (``beginEarlyEnd(bytes:)``).
        private let earlyEnds = NIOLockedValueBox(0)

        /// The most bytes of bodies waiting for their disk store after their client's response
        /// ended: past it a client waits for the store, so that misses cannot outrun the disk
        /// threads and pile up bodies beyond the memory bound.
        static let earlyEndLimit = 8 << 20

        /// Whether a miss's client may get the end of its `bytes`-long response before its disk
        /// store ends; if so, call ``endEarlyEnd(bytes:)`` when the store ends.
        func beginEarlyEnd(bytes: Int) -> Bool {
            earlyEnds.withLockedValue { total in
                guard total + bytes <= Self.earlyEndLimit else { return false }
                total += bytes
                return true
            }
        }

        /// Whether ``storeMiss(_:key:bodyFile:on:)`` stores in the disk tier on a disk thread (a
        /// future that a miss's client need not wait for).
        var storesOnDiskThreads: Bool { disk != nil && diskPool != nil }

        /// Ends what ``beginEarlyEnd(bytes:)`` began, once the disk store ended.
        func endEarlyEnd(bytes: Int) {
            earlyEnds.withLockedValue { $0 -= bytes }
        }

        /// The bytes of memory limit per URL known to have no `Vary` marker.
        ///
        /// 65,536 URLs for 64 MiB, about 4 MiB of fingerprints, table and ring (6 % of the
        /// limit); from ``minimumPlainURLs`` to ``maximumPlainURLs``. A URL forgotten costs its
        /// next disk hit one more index read. With one per 4 KiB, 16,384 URLs for 64 MiB, a
        /// working set of 20,000 objects paid that read on most of its disk hits (see
        /// Benchmarks/README.md, "The memory bound").
        static let bytesPerPlainURL = 1024
        /// The fewest URLs known to have no `Vary` marker that are kept, whatever the limit.
        static let minimumPlainURLs = 4096
        /// The most URLs known to have no `Vary` marker that are kept, whatever the limit (about
        /// 16 MiB).
        static let maximumPlainURLs = 262_144

        /// The base key of a request target (path and query).
        func baseKey(target: String) -> String { "serve \(origin) \(target)" }

        // MARK: - Lookup

        /// The memory tier's response for a request, without suspending: the hit path.
        ///
        /// - Complexity: O(1) plus the `Vary` fields' values.
        func memoryHit(base: String, requestHeaders: HTTPHeaders) -> CachedResponse? {
            let marker: VaryMarker?
            switch markers.knowledge(of: base) {
            case .none: marker = nil
            case .some(let known): marker = known
            }
            let key = marker.map { variantKey(base: base, marker: $0, requestHeaders: requestHeaders) } ?? base
            guard let response = memory.value(forKey: key), matches(response, requestHeaders) else { return nil }
            return response
        }

        /// The response stored for a request in any tier, filling the tiers above the one that had it.
        func lookUp(base: String, requestHeaders: HTTPHeaders) async -> Found? {
            if shared == nil, disk != nil, case .none = markers.knowledge(of: base) {
                // A URL not seen since the start: neither its marker nor any response is in memory.
                // Its marker and its entry are read in one trip to a disk thread.
                return (try? await offLoop { self.diskRead(base: base, requestHeaders: requestHeaders) }) ?? nil
            }
            let marker = await varyMarker(base: base)
            let key = marker.map { variantKey(base: base, marker: $0, requestHeaders: requestHeaders) } ?? base
            if let response = memory.value(forKey: key), matches(response, requestHeaders) {
                return Found(response: response, tier: .memory, key: key)
            }
            if disk != nil, let found = try? await offLoop({ self.diskLookUp(key: key) }) ?? nil,
                matches(found.response, requestHeaders)
            {
                return found
            }
            return await sharedHit(base: base, key: key, requestHeaders: requestHeaders)
        }

        /// The shared tier's response for `key`, copied into this instance's memory and disk
        /// tiers when the caller can lead a fill of `base`.
        ///
        /// RFC 9111 §4.4: the copy is a fill, so that an invalidation of the URL reaches it. The
        /// fill begins before the shared tier is read: an invalidation before that has already
        /// removed the shared entry; one after it marks the fill, and the copy is then not made,
        /// or removed before the invalidation returns. Without the fill, a response read just
        /// before an invalidation and copied just after it would stay in this instance's tiers.
        /// When a fill of `base` is under way (another request's miss, or the caller's own), the
        /// response is served without a copy: that fill stores what the URL has now.
        private func sharedHit(base: String, key: String, requestHeaders: HTTPHeaders) async -> Found? {
            guard shared != nil else { return nil }
            let leads = fills.lead(base)
            defer { if leads { fills.finish(base) } }
            guard let response = await sharedLookUp(key: key), matches(response, requestHeaders) else { return nil }
            if leads {
                await fills.storing(base) {
                    await fill(response, key: key, fromShared: true)
                } undo: {
                    _ = memory.removeValue(forKey: key)
                    try? await disk?.removeData(forKey: key)
                }
            }
            return Found(response: response, tier: .shared, key: key)
        }

        /// The disk tier's response for a request whose memory-tier lookup missed, in one trip to a
        /// disk thread: the URL's `Vary` marker (read too when this process does not know it yet) and
        /// the entry it selects; `nil` when the disk tier has none that matches the request.
        ///
        /// The response store behind a shared tier answers `nil` from the disk tier alone only
        /// through ``lookUp(base:requestHeaders:)``. Blocks: run it off the event loops.
        func diskRead(base: String, requestHeaders: HTTPHeaders) -> Found? {
            guard let disk else { return nil }
            let marker: VaryMarker?
            if case .some(let known) = markers.knowledge(of: base) {
                marker = known
            } else {
                marker = readMarker(base: base, from: disk)
                markers.set(marker, for: base, ifUnknown: true)
            }
            let key = marker.map { variantKey(base: base, marker: $0, requestHeaders: requestHeaders) } ?? base
            guard let found = diskLookUp(key: key), matches(found.response, requestHeaders) else { return nil }
            return found
        }

        /// Starts ``diskRead(base:requestHeaders:)`` on ``diskReader`` (else on ``diskPool``) and
        /// calls `completion` with its answer on `eventLoop`; `false`, having started nothing, when
        /// there is neither or a shared tier sits behind the disk tier (the full lookup then runs
        /// instead).
        ///
        /// With ``diskReader``, `completion` never runs before this returns.
        func diskRead(
            base: String, requestHeaders: HTTPHeaders, on eventLoop: any EventLoop,
            completion: @escaping @Sendable (Result<Found?, any Error>) -> Void
        ) -> Bool {
            guard disk != nil, shared == nil else { return false }
            if let diskReader,
                diskReader.submit(
                    DiskHitRead(store: self, base: base, requestHeaders: requestHeaders), on: eventLoop,
                    completion: completion)
            {
                return true
            }
            guard let diskPool else { return false }
            diskPool.runIfActive(eventLoop: eventLoop) {
                self.diskRead(base: base, requestHeaders: requestHeaders)
            }.whenComplete(completion)
            return true
        }

        /// A direct disk-hit read for a ``DiskHitReader``.
        struct DiskHitRead: Sendable {
            let store: ResponseStore
            let base: String
            let requestHeaders: HTTPHeaders
        }

        /// The reader of direct disk hits.
        typealias DiskHitReader = DiskReader<DiskHitRead, Found?>

        /// A reader of direct disk hits with `threads` threads for `loops` (not started).
        static func makeDiskReader(threads: Int, loops: [any EventLoop]) -> DiskHitReader {
            DiskHitReader(threads: threads, loops: loops) { read in
                read.store.diskRead(base: read.base, requestHeaders: read.requestHeaders)
            }
        }

        /// Runs a disk-tier operation on ``diskPool`` (on the caller without one).
        func offLoop<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
            guard let diskPool else { return try body() }
            // The result also passes through a lock. The continuation alone orders the disk
            // thread's writes before the task's reads, but ThreadSanitizer did not see that order
            // once (a response built by `diskLookUp` and read by `matches`, in CI's serve suite),
            // most likely for a continuation resumed before its task suspended, a path of the
            // runtime that it does not instrument. A lock it sees.
            let result = LockedValue<Result<T, any Error>?>(nil)
            try await diskPool.runIfActive { result.withLock { $0 = Result(catching: body) } }
            guard let answer = result.withLock({ $0 }) else { throw NIOThreadPoolError.ThreadPoolInactive() }
            return try answer.get()
        }

        private func sharedLookUp(key: String) async -> CachedResponse? {
            guard let shared else { return nil }
            do {
                guard let entry = try await shared.entry(forKey: key) else { return nil }
                var buffer = ByteBufferAllocator().buffer(capacity: entry.body.count)
                buffer.writeBytes(entry.body)
                return CachedResponse(metadata: entry.metadata, body: buffer, bodyLength: entry.body.count)
            } catch {
                // A shared tier that fails is a miss (see SharedTier); the origin answers instead.
                logger.warning("shared tier lookup of '\(key)' failed: \(error)")
                return nil
            }
        }

        private func matches(_ response: CachedResponse, _ requestHeaders: HTTPHeaders) -> Bool {
            for (name, value) in response.varyValues where Self.fieldValue(name, in: requestHeaders) != value {
                return false
            }
            return true
        }

        // MARK: - Vary

        /// The `Vary` marker of `base` in the disk tier, read without waiting for a commit that
        /// evicts.
        ///
        /// In a full disk tier nearly every store evicts, and a disk hit of a URL whose marker this
        /// process does not know must not queue behind the writer (and its checkpoints). The
        /// marker may then be one that the commit evicts; the entry it selects is read the same
        /// way (``diskLookUp(key:)``). Blocks: run it off the event loops.
        func readMarker(base: String, from disk: DiskCache) -> VaryMarker? {
            Self.marker(try? disk.attributes(forKey: "serve-vary \(base)", waitingForEviction: false))
        }

        private func varyMarker(base: String) async -> VaryMarker? {
            if case .some(let known) = markers.knowledge(of: base) { return known }
            let key = "serve-vary \(base)"
            var metadata: DiskCache.Metadata?
            if let disk {
                // As readMarker(base:from:), without waiting for a commit that evicts.
                let read = try? await offLoop { try disk.attributes(forKey: key, waitingForEviction: false) }
                metadata = read?.metadata
            }
            if metadata == nil, let shared {
                metadata = (try? await shared.entry(forKey: key))?.metadata
            }
            let marker = metadata.flatMap { Self.marker(from: $0) }
            markers.set(marker, for: base)
            return marker
        }

        /// The marker a `serve-vary` entry's metadata records, if any.
        private static func marker(from metadata: DiskCache.Metadata) -> VaryMarker? {
            guard let names = metadata.extra["serve.vary-names"], let generation = metadata.extra["serve.generation"]
            else { return nil }
            return VaryMarker(names: names.split(separator: ",").map(String.init), generation: generation)
        }

        private static func marker(_ attributes: DiskCache.Attributes?) -> VaryMarker? {
            attributes.flatMap { marker(from: $0.metadata) }
        }

        private func variantKey(base: String, marker: VaryMarker, requestHeaders: HTTPHeaders) -> String {
            var key = base + "\n" + marker.generation
            for name in marker.names {
                key += "\n" + name + ":" + Self.fieldValue(name, in: requestHeaders)
            }
            return key
        }

        /// A request field's value as `Vary` compares it: the field lines joined, whitespace trimmed.
        static func fieldValue(_ name: String, in headers: HTTPHeaders) -> String {
            ServePolicy.varyValue(name, in: headers)
        }

        /// The `Vary` field names of a response, lower-cased and sorted.
        static func varyNames(_ headers: HTTPHeaders) -> [String] {
            Array(Set(headers[canonicalForm: "vary"].map { $0.lowercased() }.filter { !$0.isEmpty })).sorted()
        }

        /// The key a new response for a request is stored under; creates the URL's marker when the
        /// response varies on new fields.
        func storageKey(base: String, requestHeaders: HTTPHeaders, responseHeaders: HTTPHeaders) async -> String {
            let names = Self.varyNames(responseHeaders)
            let current = await varyMarker(base: base)
            if names.isEmpty {
                if current != nil { await removeMarker(base: base) }
                return base
            }
            if let current, current.names == names {
                return variantKey(base: base, marker: current, requestHeaders: requestHeaders)
            }
            let marker = VaryMarker(names: names, generation: UUID().uuidString.lowercased())
            markers.set(marker, for: base)
            let metadata = DiskCache.Metadata(extra: [
                "serve.vary-names": names.joined(separator: ","), "serve.generation": marker.generation,
            ])
            let key = "serve-vary \(base)"
            do {
                try await disk?.store(Data(), forKey: key, metadata: metadata)
            } catch {
                logger.warning("could not store the Vary marker of '\(base)': \(error)")
            }
            if let shared {
                do {
                    try await shared.store(SharedEntry(key: key, body: Data(), metadata: metadata))
                } catch {
                    logger.warning("could not share the Vary marker of '\(base)': \(error)")
                }
            }
            return variantKey(base: base, marker: marker, requestHeaders: requestHeaders)
        }

        private func removeMarker(base: String) async {
            markers.set(nil, for: base)
            await removeStored(key: "serve-vary \(base)")
        }

        /// Removes `key` from the disk and shared tiers; a failure is logged, not thrown (the entry
        /// then ages out as any other).
        func removeStored(key: String) async {
            do { try await disk?.removeData(forKey: key) } catch {
                logger.warning("could not remove '\(key)': \(error)")
            }
            if let shared {
                do { try await shared.removeEntry(forKey: key) } catch {
                    logger.warning("could not remove '\(key)' from the shared tier: \(error)")
                }
            }
        }

        // MARK: - Storing

        /// Keeps a response whose whole body is `body` in every tier.
        func store(_ response: CachedResponse, key: String) async {
            await fill(response, key: key, fromShared: false)
            if let shared, let body = response.body, body.readableBytes <= sharedItemLimit {
                do {
                    try await shared.store(
                        SharedEntry(
                            key: key, body: Data(body.readableBytesView), metadata: response.metadata,
                            expires: nil))
                } catch {
                    logger.warning("could not write '\(key)' to the shared tier: \(error)")
                }
            }
        }

        /// Keeps a response whose body is the file at `file` (moved into the disk tier).
        func store(_ response: CachedResponse, key: String, bodyFile file: URL) async {
            _ = memory.removeValue(forKey: key)
            guard let disk else { return }
            let metadata = response.metadata
            do {
                try await offLoop { try disk.store(fileAt: file, forKey: key, moving: true, metadata: metadata) }
            } catch {
                logger.warning("could not store '\(key)' on disk: \(error)")
            }
            if let shared, response.bodyLength <= sharedItemLimit, let data = try? await disk.data(forKey: key) {
                do {
                    try await shared.store(SharedEntry(key: key, body: data, metadata: response.metadata))
                } catch {
                    logger.warning("could not write '\(key)' to the shared tier: \(error)")
                }
            }
        }

        private func fill(_ response: CachedResponse, key: String, fromShared: Bool) async {
            keepInMemory(response, key: key)
            guard let disk, let body = response.body else { return }
            let metadata = response.metadata
            do {
                try await offLoop { try disk.store(Self.sharedData(body), forKey: key, metadata: metadata) }
            } catch {
                // The response is still served; only the disk copy is missing.
                logger.warning("could not store '\(key)' on disk: \(error)")
            }
        }

        /// Keeps a response with its body in the memory tier: always up to ``memoryBodyLimit``,
        /// and a larger body up to ``memoryItemLimit`` only in free room (nothing is evicted for
        /// it, see ``MemoryCache/setValueIfRoom(_:forKey:cost:timeToLive:)``); otherwise the key's
        /// earlier response leaves memory, so that memory never answers with an older one.
        ///
        /// A body collected chunk by chunk may sit in a buffer larger than a copy would take (NIO
        /// rounds a new buffer to a power of two): memory then keeps a copy, so that it is charged
        /// what it holds. A spool sized by Content-Length needs none.
        func keepInMemory(_ response: CachedResponse, key: String) {
            let length = response.bodyLength
            guard length <= memoryItemLimit,
                length <= memoryBodyLimit || memory.hasRoom(forKey: key, cost: response.memoryCost)
            else {
                _ = memory.removeValue(forKey: key)
                return
            }
            let kept =
                response.body.map {
                    $0.capacity > Self.copyCapacity($0.readableBytes)
                        ? response.holding(Self.exactBuffer($0.readableBytesView)) : response
                } ?? response
            if length <= memoryBodyLimit {
                memory.setValue(kept, forKey: key)
            } else if !memory.setValueIfRoom(kept, forKey: key) {
                _ = memory.removeValue(forKey: key)
            }
        }

        /// A buffer's readable bytes as `Data`, without a copy.
        ///
        /// The `Data` keeps the buffer's storage alive (as NIOFoundationCompat's `.noCopy` does).
        /// Stored bodies are immutable, so the bytes cannot change under it; a miss saves a copy of
        /// its body and, for a body above the mmap threshold (see ``MemoryFootprint``), the page
        /// faults of a fresh mapping.
        static func sharedData(_ buffer: ByteBuffer) -> Data {
            guard buffer.readableBytes > 0 else { return Data() }
            return buffer.withUnsafeReadableBytesWithStorageManagement { bytes, storage in
                _ = storage.retain()
                return Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count,
                    deallocator: .custom { _, _ in storage.release() })
            }
        }

        /// Replaces a stored response's headers after a `304` (RFC 9111 §4.3.4), keeping its body.
        func update(_ response: CachedResponse, key: String) async {
            if response.body != nil {
                keepInMemory(response, key: key)
            } else {
                _ = memory.removeValue(forKey: key)  // a body kept before would come with the old head
            }
            let metadata = response.metadata
            do {
                if let disk { _ = try await offLoop { try disk.updateMetadata(metadata, forKey: key) } }
            } catch {
                logger.warning("could not update '\(key)' on disk: \(error)")
            }
            if let shared {
                do {
                    _ = try await shared.updateMetadata(response.metadata, expires: nil, forKey: key)
                } catch {
                    logger.warning("could not update '\(key)' in the shared tier: \(error)")
                }
            }
        }

        /// Forgets every cached `Vary` marker (after a purge removed them from the tiers).
        func forgetMarkers() { markers.removeAll() }

        /// What this process knows of `base`'s `Vary` marker (see ``VaryMarkers/knowledge(of:)``).
        func markerKnowledge(of base: String) -> VaryMarker?? { markers.knowledge(of: base) }

        /// URLs known to have a `Vary` marker, and known to have none.
        var markerCounts: (markers: Int, plain: Int) { markers.counts }

        /// The most URLs known to have no `Vary` marker that this store keeps.
        var plainURLLimit: Int { markers.plainLimit }

        /// Whether this process knows a `Vary` marker for `base` (its variants may be in memory only).
        func hasKnownMarker(base: String) -> Bool {
            if case .some(.some) = markers.knowledge(of: base) { return true }
            return false
        }

        /// Removes every stored response of a URL (RFC 9111 §4.4).
        func invalidate(base: String) async {
            // A fill under way then stores nothing more, and has removed what it stored; a disk
            // hit read meanwhile is not copied into memory.
            await fills.invalidate(base) { await remove(base: base) }
        }

        /// Removes `base`'s response and `Vary` marker from every tier, without marking a fill
        /// under way (what a fill's leader does with its own answer, see
        /// ``ProxyContext/discard(base:)``).
        func remove(base: String) async {
            _ = memory.removeValue(forKey: base)
            await removeStored(key: base)
            await removeMarker(base: base)
            markers.forget(base: base)
        }
    }
#endif
