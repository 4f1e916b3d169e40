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
            guard outcome != .full else { return false }
            writer.record.cacheStatus = status
            writer.record.tier = found.tier
            var headers = response.headers
            headers.remove(name: "content-length")
            headers.remove(name: "content-range")
            headers.replaceOrAdd(name: "Age", value: ServePolicy.ageValue(response, now: Date()))
            ProxyHeaders.addVia(to: &headers, version: head.version)
            let length = response.bodyLength
            guard case .ranges(let ranges) = outcome else {
                headers.remove(name: "content-type")
                headers.add(name: "Content-Range", value: "bytes */\(length)")
                headers.add(name: "Content-Length", value: "0")
                try await writer.head(status: 416, headers: headers)
                await writer.end()
                return true
            }
            if ranges.count == 1 {
                let range = ranges[0]
                headers.add(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound)/\(length)")
                headers.add(name: "Content-Length", value: String(range.count))
                try await writer.head(status: 206, headers: headers)
                try await sendSlice(range, of: found)
                await writer.end()
                return true
            }
            let boundary = "stash-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let contentType = response.headers.first(name: "content-type")
            let parts = ranges.map { range -> String in
                var part = "\r\n--\(boundary)\r\n"
                if let contentType { part += "Content-Type: \(contentType)\r\n" }
                part += "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(length)\r\n\r\n"
                return part
            }
            let closing = "\r\n--\(boundary)--\r\n"
            let total =
                parts.reduce(0) { $0 + $1.utf8.count } + ranges.reduce(0) { $0 + $1.count } + closing.utf8.count
            headers.remove(name: "content-type")
            headers.add(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
            headers.add(name: "Content-Length", value: String(total))
            try await writer.head(status: 206, headers: headers)
            for (part, range) in zip(parts, ranges) {
                try await writer.body(ByteBuffer(string: part))
                try await sendSlice(range, of: found)
            }
            try await writer.body(ByteBuffer(string: closing))
            await writer.end()
            return true
        }

        private mutating func sendSlice(_ range: ClosedRange<Int>, of found: ResponseStore.Found) async throws {
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
