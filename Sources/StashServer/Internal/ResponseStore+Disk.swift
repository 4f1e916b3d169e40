#if Serve
    import Foundation
    import NIOCore
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    extension ResponseStore {
        /// One read of the disk tier, ``DiskCache/entry(forKey:decodingExtra:)``.
        ///
        /// The stored head and the body come from one snapshot. The head is decoded from the
        /// entry's metadata text, or taken from ``heads`` when that text was decoded before (see
        /// ``DiskHeads``). An inline body comes in memory; a value file is read into memory
        /// only when it is at most ``memoryBodyLimit`` long and the memory tier admits it (its
        /// frequency sketch rates it above what it would evict), or when it is longer and the
        /// memory tier has free room for it, and is otherwise left open for `sendfile`. Blocks: run it off the event loops.
        func diskLookUp(key: String) -> Found? {
            guard let disk else { return nil }
            beforeDiskRead?(key)
            // Taken before the read: a copy into memory is made only if no invalidation of the
            // URL began since (``InvalidationClock``).
            let ticket = fills.copies.ticket(forKey: key)
            do {
                guard let entry = try disk.entry(forKey: key, decodingExtra: false, waitingForEviction: false),
                    let head = self.head(of: entry, key: key)
                else { return nil }
                afterDiskRead?(key)
                let size = entry.attributes.size
                if let bytes = entry.inlineBytes {
                    guard bytes.count == size else { return nil }
                    let response = head.holding(Self.exactBuffer(bytes))
                    if size <= memoryBodyLimit {
                        copyIntoMemory(since: ticket, key: key) { memory.promoteValue(response, forKey: key) }
                    }
                    return Found(response: response, tier: .disk, key: key)
                }
                guard let descriptor = entry.fileDescriptor else { return nil }
                if size <= memoryBodyLimit,
                    memory.admitsPromotion(forKey: key, cost: head.memoryCost + size),
                    let body = Self.read(descriptor, count: size)
                {
                    let response = head.holding(body)
                    copyIntoMemory(since: ticket, key: key) { memory.setValue(response, forKey: key) }
                    return Found(response: response, tier: .disk, key: key)
                }
                // A larger body enters only into free room: nothing is evicted for it.
                if size > memoryBodyLimit, size <= memoryItemLimit,
                    memory.hasRoom(forKey: key, cost: head.memoryCost + size),
                    let body = Self.read(descriptor, count: size)
                {
                    let response = head.holding(body)
                    copyIntoMemory(since: ticket, key: key) { memory.setValueIfRoom(response, forKey: key) }
                    return Found(response: response, tier: .disk, key: key)
                }
                return Found(response: head, tier: .disk, key: key, entry: entry)
            } catch {
                logger.warning("disk tier lookup of '\(key)' failed: \(error)")
                return nil
            }
        }

        /// Copies a disk hit into the memory tier with `copy`, unless an invalidation of its URL
        /// began since `ticket` was taken, before the read (``InvalidationClock``).
        private func copyIntoMemory(since ticket: InvalidationClock.Ticket?, key: String, _ copy: () -> Void) {
            fills.copies.copy(since: ticket, copy) { _ = memory.removeValue(forKey: key) }
        }

        /// The head (without a body) of a disk-tier entry: the one kept in ``heads`` when the
        /// entry's stored text is the one it was read from, else read from that text (and kept);
        /// `nil` when the metadata is not a stored response's.
        ///
        /// Read from the text's ``StoredHead`` record when it has one (the header fields are then
        /// decoded only if something asks for them), else decoded whole.
        func head(of entry: DiskCache.Entry, key: String) -> CachedResponse? {
            let size = entry.attributes.size
            guard entry.hasStoredExtra else {
                // A staged entry comes decoded: its head is not kept (it has no stored text yet).
                return CachedResponse(metadata: entry.attributes.metadata, body: nil, bodyLength: size)
            }
            guard let text = entry.storedExtra else { return nil }
            if let kept = heads.head(forKey: key, text: text, size: size) { return kept }
            let head: CachedResponse
            if let record = StoredHead.read(fromExtra: text) {
                head = CachedResponse(record: record, text: text, bodyLength: size)
            } else {
                guard
                    let decoded = CachedResponse(
                        metadata: DiskCache.Metadata(extra: DiskCache.decodeExtra(text)), body: nil, bodyLength: size)
                else { return nil }
                head = decoded
            }
            heads.keep(head, forKey: key, text: text, size: size)
            return head
        }

        /// A buffer of exactly `bytes`' length holding them: what the memory tier charges is
        /// what it holds.
        static func exactBuffer(_ bytes: some Collection<UInt8>) -> ByteBuffer {
            var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            return buffer
        }

        /// The capacity of a new buffer for `count` bytes (``exactBuffer(_:)``): NIO allocates
        /// the next power of two.
        static func copyCapacity(_ count: Int) -> Int {
            count <= 1 ? count : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
        }

        /// A buffer of exactly `count` bytes read from an open file with `pread(2)`; `nil` when
        /// the file is shorter or cannot be read.
        static func read(_ descriptor: Int32, count: Int) -> ByteBuffer? {
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            guard count > 0 else { return buffer }
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw -> Int in
                var done = 0
                while done < count {
                    let n = pread(descriptor, raw.baseAddress! + done, count - done, off_t(done))
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { break }
                    done += n
                }
                return done
            }
            return read == count ? buffer : nil
        }
    }
#endif
