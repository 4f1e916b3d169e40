#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    extension Exchange {
        /// Answers a `GET` with `Range` from the URL's stored partial content, when every range it
        /// asks for is held and the entry may be reused (RFC 9111 §3.3: an incomplete response
        /// answers only a request for a range wholly within it; §4.2 freshness as for any entry).
        ///
        /// The answer is a `206` with the stored fields of the newest piece, a current `Age` and the
        /// proxy's `Via` (RFC 9111 §3.4, §4.1); `multipart/byteranges` for several ranges. The
        /// request's own `If-None-Match` or `If-Modified-Since` is evaluated first (RFC 9110
        /// §13.2.2), and an `If-Range` that does not match the stored validator sends the request to
        /// the origin (§13.1.5).
        ///
        /// - Parameter completeLength: Set to the stored complete length, when there is an entry.
        /// - Returns: Whether the request was answered.
        mutating func servePartial(base: String, completeLength: inout Int?) async throws -> Bool {
            guard let partial = await context.store.partial(base: base) else { return false }
            notePartial(base)
            completeLength = partial.completeLength
            let status: CacheStatus
            switch ServePolicy.reuse(
                method: head.method, requestHeaders: head.headers, stored: partial.view, now: Date())
            {
            case .fresh: status = .hit
            case .stale: status = .stale
            default: return false
            }
            guard partial.validator != .weak else { return false }
            let outcome = RangeRequest.evaluate(method: head.method, requestHeaders: head.headers, stored: partial.view)
            guard case .ranges(let ranges) = outcome, ranges.allSatisfy({ partial.bodyRange(of: $0) != nil }) else {
                return false
            }
            let stand = ResponseStore.Found(response: partial.view, tier: partial.found.tier, key: partial.found.key)
            if ConditionalRequest.isNotModified(method: head.method, requestHeaders: head.headers, stored: partial.view)
            {
                try await serve(stand, status: status)
                return true
            }
            guard
                let answer = RangeAnswer(outcome, headers: servedHeaders(partial.view), length: partial.completeLength)
            else { return false }
            writer.record.cacheStatus = status
            writer.record.tier = partial.found.tier
            try await writer.head(status: answer.status, headers: answer.headers)
            for piece in answer.pieces {
                switch piece {
                case .text(let text): try await writer.body(text)
                case .bytes(let range):
                    guard let slice = partial.bodyRange(of: range) else { throw ServeFailure.storedFileVanished }
                    try await sendSlice(slice, of: partial.found)
                }
            }
            await writer.end()
            return true
        }

        /// Relays a `206` from the origin and stores it as a piece of the URL's partial content
        /// (RFC 9111 §3.3: a `206` may be stored as if it were an incomplete `200`).
        ///
        /// Stored only when it holds one range of a known complete length (RFC 9110 §14.4), its body
        /// is exactly that range, it has no weak validator and no `Vary`, and a `200` with its fields
        /// could be stored (RFC 9111 §3). Like a whole response, its last chunk is held back until
        /// it is stored.
        mutating func relayPartial(_ answer: OriginAnswer, base: String) async throws {
            let responseHeaders = answer.headers
            var clientHeaders = responseHeaders
            ProxyHeaders.addVia(to: &clientHeaders, version: head.version)
            try await writer.head(status: answer.status, headers: clientHeaders)
            let validator = PartialContent.validator(responseHeaders)
            var storable: HTTPHeaders? = nil
            let piece = PartialContent.piece(responseHeaders)
            if let piece, validator != .weak, piece.range.count <= context.maximumStoredBody,
                ResponseStore.varyNames(responseHeaders).isEmpty
            {
                storable = ServePolicy.storableHeaders(
                    method: .GET, requestHeaders: head.headers, status: 200, responseHeaders: responseHeaders)
            }
            guard let storable, let piece else {
                for try await chunk in answer.response.body { try await writer.body(chunk) }
                await writer.end()
                return
            }
            let spool = BodySpool(
                memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory,
                expectedLength: piece.range.count)
            var complete = true
            var held: ByteBuffer?
            do {
                for try await chunk in answer.response.body {
                    if complete, !spool.append(chunk, limit: piece.range.count) { complete = false }
                    if let previous = held { try await writer.body(previous) }
                    held = chunk
                }
            } catch {
                spool.discard()
                throw error
            }
            // RFC 9110 §14.4: the content is the range that Content-Range names, byte for byte.
            if complete, spool.length == piece.range.count,
                ServePolicy.isComplete(bodyLength: spool.length, responseHeaders: responseHeaders)
            {
                await storePiece(
                    spool, piece: piece, validator: validator, storable: storable, answer: answer, base: base)
            } else {
                spool.discard()
            }
            if let held { try await writer.body(held) }
            await writer.end()
        }

        /// Adds a piece to the URL's partial content.
        ///
        /// It is combined with the stored pieces when they all share its strong validator and
        /// complete length (RFC 9111 §3.4, RFC 9110 §15.3.7.3), and replaces them otherwise. The fields of the new piece replace the stored ones (§3.4).
        /// When the pieces hold the whole representation, they become a complete stored `200` and
        /// the partial entry is removed. Nothing is stored when the URL was invalidated since its
        /// fill began (``ProxyContext/storeFetched(base:_:)``).
        func storePiece(
            _ spool: BodySpool, piece: PartialContent.Piece, validator: PartialContent.Validator,
            storable: HTTPHeaders, answer: OriginAnswer, base: String
        ) async {
            let stored = await context.storeFetched(base: base) {
                await storePieceNow(
                    spool, piece: piece, validator: validator, storable: storable, answer: answer, base: base)
            }
            if !stored { spool.discard() }
        }

        private func storePieceNow(
            _ spool: BodySpool, piece: PartialContent.Piece, validator: PartialContent.Validator,
            storable: HTTPHeaders, answer: OriginAnswer, base: String
        ) async {
            spool.close()
            var segments = [PartialSegment(range: piece.range, old: nil)]
            let existing = await context.store.partial(base: base)
            if let existing, case .strong = validator, existing.validator == validator,
                existing.completeLength == piece.completeLength
            {
                segments += PartialSegment.kept(existing.runs, without: piece.range)
                segments.sort { $0.range.lowerBound < $1.range.lowerBound }
            }
            var runs = PartialContent.runs(segments.map(\.range))
            if runs.count > PartialContent.maximumRuns || runs.reduce(0, { $0 + $1.count }) > context.maximumStoredBody
            {
                segments = [PartialSegment(range: piece.range, old: nil)]
                runs = [piece.range]
            }
            var body = spool
            if segments.count > 1, let existing {
                guard let joined = await join(segments, new: spool, old: existing) else {
                    spool.discard()
                    return
                }
                spool.discard()
                body = joined
            }
            var headers = storable
            headers.remove(name: "content-range")
            headers.remove(name: "content-length")
            let complete = runs == [0...(piece.completeLength - 1)]
            if !complete {
                headers.add(name: "Content-Length", value: String(body.length))
                headers.add(
                    name: PartialContent.heldField,
                    value: PartialContent.heldValue(completeLength: piece.completeLength, runs: runs))
            } else {
                headers.add(name: "Content-Length", value: String(piece.completeLength))
            }
            let cached = CachedResponse(
                status: complete ? 200 : 206, headers: headers, varyValues: [:], requestTime: answer.requestTime,
                responseTime: answer.responseTime, body: body.buffer, bodyLength: body.length)
            let key =
                complete
                ? await context.store.storageKey(
                    base: base, requestHeaders: head.headers, responseHeaders: answer.headers)
                : ResponseStore.partialKey(base: base)
            if let file = body.file {
                await context.store.store(cached, key: key, bodyFile: file)
                try? FileManager.default.removeItem(at: file)  // left over only when the store failed
            } else {
                await context.store.store(cached, key: key)
            }
            if complete {
                if existing != nil { await context.store.removePartial(base: base) }
                context.partials.withLock { _ = $0.remove(base) }
            } else {
                notePartial(base)
            }
        }

        /// The bytes of `segments` in order, from the new piece's spool or the stored entry, in a
        /// new spool (memory up to the memory tier's item limit, then a file); `nil` when a stored
        /// byte cannot be read.
        private func join(_ segments: [PartialSegment], new: BodySpool, old: PartialEntry) async -> BodySpool? {
            let total = segments.reduce(0) { $0 + $1.range.count }
            let joined = BodySpool(
                memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory, expectedLength: total)
            let chunk = 1 << 20
            for segment in segments {
                var done = 0
                while done < segment.range.count {
                    let count = min(chunk, segment.range.count - done)
                    let offset = (segment.old ?? 0) + done
                    let bytes: ByteBuffer?
                    if segment.old != nil {
                        bytes = try? await context.store.offLoop { old.bytes(at: offset, count: count) }
                    } else {
                        let (buffer, file) = (new.buffer, new.file)
                        bytes = try? await context.store.offLoop {
                            PartialEntry.read(body: buffer, file: file, at: offset, count: count)
                        }
                    }
                    guard let bytes, joined.append(bytes, limit: total) else {
                        joined.discard()
                        return nil
                    }
                    done += count
                }
            }
            joined.close()
            return joined
        }

        /// Answers a `GET` without `Range` for a URL that has partial content missing one run of
        /// bytes, by asking the origin for that run only (RFC 9111 §3.3: a cache may complete a
        /// stored incomplete response with a range request) and combining it with the stored
        /// pieces into a complete response, stored and served whole (§3.4).
        ///
        /// With a strong validator the request carries `If-Range` (RFC 9110 §13.1.5), so that a
        /// changed representation comes back whole. A `206` that cannot be combined (another
        /// validator, none, another range) is dropped and the whole response is asked for; any
        /// other answer is relayed and stored as for a plain request.
        ///
        /// - Returns: `false` when nothing was sent: no partial content, or more than one run
        ///   missing, or a request with preconditions of its own.
        mutating func completePartial(base: String) async throws -> Bool {
            guard head.method == .GET, context.partials.withLock({ $0.contains(base) }) else { return false }
            for name in ["range", "if-range", "if-match", "if-none-match", "if-modified-since", "if-unmodified-since"]
            where head.headers.contains(name: name) {
                return false
            }
            guard let partial = await context.store.partial(base: base) else {
                context.partials.withLock { _ = $0.remove(base) }
                return false
            }
            let gaps = PartialContent.missing(partial.runs, length: partial.completeLength)
            let validator = partial.validator
            guard gaps.count == 1, let gap = gaps.first, validator != .weak,
                partial.completeLength <= context.maximumStoredBody
            else { return false }
            var request = OriginRequest.make(head: head, client: writer.record.client, stored: nil, context: context)
            request.body = body
            request.headers.replaceOrAdd(
                name: "Range", value: PartialContent.rangeValue(gap, completeLength: partial.completeLength))
            if case .strong(let ifRange) = validator { request.headers.replaceOrAdd(name: "If-Range", value: ifRange) }
            guard let answer = try await askOrigin(request, stored: nil) else { return true }
            writer.record.cacheStatus = .miss
            if answer.status == 416 {
                // RFC 9110 §15.5.17: the representation no longer has those bytes; the stored
                // pieces are of another one.
                for try await _ in answer.response.body {}
                await context.store.removePartial(base: base)
                context.partials.withLock { _ = $0.remove(base) }
                try await forward(stored: nil, base: base)
                return true
            }
            guard answer.status == 206 else {
                if answer.status == 200 { await context.store.removePartial(base: base) }
                try await relay(answer, stored: nil, base: base)
                return true
            }
            let piece = PartialContent.Piece(range: gap, completeLength: partial.completeLength)
            guard case .strong = validator, PartialContent.validator(answer.headers) == validator,
                PartialContent.piece(answer.headers) == piece,
                ResponseStore.varyNames(answer.headers).isEmpty,
                let storable = ServePolicy.storableHeaders(
                    method: .GET, requestHeaders: head.headers, status: 200, responseHeaders: answer.headers)
            else {
                // RFC 9111 §3.4: not the same representation as far as the cache can tell.
                for try await _ in answer.response.body {}
                try await forward(stored: nil, base: base)
                return true
            }
            let spool = BodySpool(
                memoryLimit: context.store.memoryItemLimit, directory: context.spoolDirectory, expectedLength: gap.count
            )
            var complete = true
            do {
                for try await chunk in answer.response.body where complete {
                    complete = spool.append(chunk, limit: gap.count)
                }
            } catch {
                spool.discard()
                throw error
            }
            guard complete, spool.length == gap.count else {
                spool.discard()
                try await forward(stored: nil, base: base)
                return true
            }
            await storePiece(spool, piece: piece, validator: validator, storable: storable, answer: answer, base: base)
            guard let found = await context.store.lookUp(base: base, requestHeaders: head.headers) else {
                try await forward(stored: nil, base: base)
                return true
            }
            try await serve(found, status: .miss)
            return true
        }

        /// Remembers that `base` has partial content, so that a request without `Range` tries to
        /// complete it (bounded: the set is emptied when full, and a lookup finds the entry again).
        func notePartial(_ base: String) {
            context.partials.withLock { known in
                if known.count >= 4096 { known.removeAll() }
                known.insert(base)
            }
        }
    }

    /// One run of a combined partial body: its bytes of the representation, and where they are in
    /// the stored entry's body (`old`), or `nil` for the new piece (its bytes from its start).
    struct PartialSegment {
        var range: ClosedRange<Int>
        var old: Int?

        /// The parts of the stored `runs` that `replaced` does not cover, with their body offsets.
        static func kept(_ runs: [ClosedRange<Int>], without replaced: ClosedRange<Int>) -> [PartialSegment] {
            var out: [PartialSegment] = []
            var offset = 0
            for run in runs {
                if run.lowerBound < replaced.lowerBound {
                    out.append(
                        PartialSegment(
                            range: run.lowerBound...min(run.upperBound, replaced.lowerBound - 1), old: offset))
                }
                if run.upperBound > replaced.upperBound {
                    let start = max(run.lowerBound, replaced.upperBound + 1)
                    out.append(PartialSegment(range: start...run.upperBound, old: offset + start - run.lowerBound))
                }
                offset += run.count
            }
            return out
        }
    }
#endif
