#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    extension Exchange {
        /// Answers a `Range` request from a stored complete response.
        ///
        /// RFC 9111 §3.4, RFC 9110 §14: `206` with one range, `multipart/byteranges` for several (§14.6), `416` when none is
        /// satisfiable. A body in a disk-tier file is sent slice by slice from the file: a range of a
        /// large body reads only its own bytes.
        ///
        /// - Returns: `false` when the whole response answers instead (no applicable `Range`).
        mutating func serveRange(_ found: ResponseStore.Found, status: CacheStatus) async throws -> Bool {
            let response = found.response
            let outcome = RangeRequest.evaluate(method: head.method, requestHeaders: head.headers, stored: response)
            guard
                let answer = RangeAnswer(outcome, headers: servedHeaders(response), length: response.bodyLength)
            else { return false }
            writer.record.cacheStatus = status
            writer.record.tier = found.tier
            try await writer.head(status: answer.status, headers: answer.headers)
            for piece in answer.pieces {
                switch piece {
                case .text(let text): try await writer.body(text)
                case .bytes(let range): try await sendSlice(range, of: found)
                }
            }
            await writer.end()
            return true
        }

        mutating func sendSlice(_ range: ClosedRange<Int>, of found: ResponseStore.Found) async throws {
            if let body = found.response.body {
                guard let slice = body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count) else {
                    throw ServeFailure.storedFileVanished
                }
                try await writer.body(slice)
            } else if let entry = found.entry {
                try await writer.body(entry: entry, offset: range.lowerBound, length: range.count)
            } else if let file = found.file {
                try await writer.body(fileAt: file, offset: range.lowerBound, length: range.count)
            }
        }
    }
#endif
