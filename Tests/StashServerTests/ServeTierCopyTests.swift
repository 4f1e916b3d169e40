#if Serve
    import Foundation
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Stash
    @testable import StashServer
    import Testing

    /// A hit's copy into a faster tier (a shared-tier hit into the instance's own tiers, a disk
    /// hit into memory) and an invalidation of its URL (RFC 9111 §4.4) that arrives between the
    /// read and the copy: the copy never outlives the invalidation.
    @Suite struct ServeTierCopyTests {
        /// A shared tier in memory whose reads of one key can be held (the injected fault: a slow
        /// round trip): a held read returns the entry as it was when the read arrived, as a
        /// database's snapshot does, even if the entry was removed meanwhile.
        final class HeldSharedTier: SharedTier {
            private let entries = Locked([String: SharedEntry]())
            private let held = Locked<(key: String?, arrived: Bool)>((nil, false))
            private let gate = Gate()

            /// Holds the next reads of `key` until ``release()``.
            func hold(_ key: String) { held.withLock { $0 = (key, false) } }

            /// Whether a read of the held key has arrived (and is held).
            var readArrived: Bool { held.withLock { $0.arrived } }

            func release() { gate.open() }

            func entry(forKey key: String) async throws -> SharedEntry? {
                let snapshot = entries.withLock { $0[key] }
                let isHeld = held.withLock { held -> Bool in
                    guard held.key == key else { return false }
                    held.arrived = true
                    return true
                }
                if isHeld { await gate.wait() }
                return snapshot
            }

            func store(_ entry: SharedEntry) async throws { entries.withLock { $0[entry.key] = entry } }

            func updateMetadata(_ metadata: DiskCache.Metadata, expires: Date?, forKey key: String) async throws
                -> Bool
            {
                entries.withLock { entries -> Bool in
                    guard entries[key] != nil else { return false }
                    entries[key]!.metadata = metadata
                    entries[key]!.expires = expires
                    return true
                }
            }

            func removeEntry(forKey key: String) async throws { entries.withLock { _ = $0.removeValue(forKey: key) } }

            func containsEntry(forKey key: String) async throws -> Bool { entries.withLock { $0[key] != nil } }
        }

        static func store(on shared: HeldSharedTier) -> ResponseStore {
            ResponseStore(
                origin: URL(string: "http://127.0.0.1:9")!, memoryLimit: 8 << 20, disk: nil, shared: shared,
                sharedItemLimit: 1 << 20, logger: Logger(label: "test"))
        }

        static func response(_ text: String) -> CachedResponse {
            var headers = HTTPHeaders()
            headers.add(name: "Cache-Control", value: "public, max-age=600")
            let now = Date()
            return CachedResponse(
                status: 200, headers: headers, varyValues: [:], requestTime: now, responseTime: now,
                body: ByteBuffer(string: text), bodyLength: text.utf8.count)
        }

        /// A shared-tier hit is copied into the instance's memory tier; one whose URL is
        /// invalidated while the shared tier's answer is on its way is served (it was asked for
        /// before) but not copied: the next lookup finds nothing, where the copy would have
        /// answered with the response the invalidation removed.
        @Test func aSharedHitReadBeforeAnInvalidationIsNotCopiedAfterIt() async throws {
            let shared = HeldSharedTier()
            let fleet = Self.store(on: shared)
            let instance = Self.store(on: shared)
            let (kept, invalidated) = (fleet.baseKey(target: "/kept"), fleet.baseKey(target: "/doc"))
            await fleet.store(Self.response("kept"), key: kept)
            await fleet.store(Self.response("v1"), key: invalidated)

            let hit = await instance.lookUp(base: kept, requestHeaders: HTTPHeaders())
            #expect(hit?.tier == .shared)
            #expect(instance.memory.value(forKey: kept) != nil)

            shared.hold(invalidated)
            let lookUp = Task { await instance.lookUp(base: invalidated, requestHeaders: HTTPHeaders()) }
            #expect(await eventually { shared.readArrived })
            await instance.invalidate(base: invalidated)
            #expect(try await shared.containsEntry(forKey: invalidated) == false)
            shared.release()
            let found = await lookUp.value
            #expect(found.flatMap { $0.response.body.map { String(buffer: $0) } } == "v1")
            #expect(instance.memory.value(forKey: invalidated) == nil)
            #expect(await instance.lookUp(base: invalidated, requestHeaders: HTTPHeaders()) == nil)
        }

        /// A disk hit is copied into the memory tier; one whose URL is invalidated between the
        /// disk read and the copy is served (it was read before) but not copied: the event loop's
        /// memory hit finds nothing, where the copy would have answered with the response the
        /// invalidation removed from both tiers.
        @Test func aDiskHitReadBeforeAnInvalidationIsNotCopiedAfterIt() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-tier-copy-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let disk = try DiskCache(directory: directory)
            defer { disk.close() }
            let pool = NIOThreadPool(numberOfThreads: 2)
            pool.start()
            let origin = URL(string: "http://127.0.0.1:9")!
            let writer = ResponseStore(
                origin: origin, memoryLimit: 8 << 20, disk: disk, shared: nil, sharedItemLimit: 0,
                logger: Logger(label: "test"), diskPool: pool)
            let (kept, invalidated) = (writer.baseKey(target: "/kept"), writer.baseKey(target: "/doc"))
            await writer.store(Self.response("kept"), key: kept)
            await writer.store(Self.response("v1"), key: invalidated)
            let held = HeldDiskRead(suffix: "/doc")
            let reader = ResponseStore(
                origin: origin, memoryLimit: 8 << 20, disk: disk, shared: nil, sharedItemLimit: 0,
                logger: Logger(label: "test"), diskPool: pool, afterDiskRead: held.hook)

            let hit = await reader.lookUp(base: kept, requestHeaders: HTTPHeaders())
            #expect(hit?.tier == .disk)
            #expect(reader.memory.value(forKey: kept) != nil)

            let lookUp = Task { await reader.lookUp(base: invalidated, requestHeaders: HTTPHeaders()) }
            #expect(await eventually { held.isHolding })
            await reader.invalidate(base: invalidated)
            #expect(try await disk.attributes(forKey: invalidated) == nil)
            held.release()
            let found = await lookUp.value
            #expect(found?.tier == .disk)
            #expect(found.flatMap { $0.response.body.map { String(buffer: $0) } } == "v1")
            #expect(reader.memory.value(forKey: invalidated) == nil)
            // The event loop's first look, before any disk read.
            #expect(reader.memoryHit(base: invalidated, requestHeaders: HTTPHeaders()) == nil)
            #expect(await reader.lookUp(base: invalidated, requestHeaders: HTTPHeaders()) == nil)
            try await pool.shutdownGracefully()
        }
    }
#endif
