#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// The `206` or `416` that answers a `Range` request from a response of known length: its
    /// status, its fields and its body as pieces in order, some text of its own (the parts' heads
    /// of `multipart/byteranges`), the others byte ranges of the response's body.
    ///
    /// The same answer is sent from a stored body (``Exchange/serveRange(_:status:)``) and from a
    /// body still arriving from the origin (``RangeAnswer/Cutter``).
    struct RangeAnswer {
        /// One piece of the answer's body.
        enum Piece: Equatable {
            /// Bytes of the answer's own (a part's boundary and fields, the closing boundary).
            case text(ByteBuffer)
            /// These bytes of the response's body.
            case bytes(ClosedRange<Int>)
        }

        var status: Int
        var headers: HTTPHeaders
        var pieces: [Piece]

        /// The answer to `outcome`, `nil` for ``RangeRequest/Outcome/full``.
        ///
        /// - Parameters:
        ///   - headers: The response's fields as they are served (`Age` and `Via` included); its
        ///     `Content-Length` and `Content-Range` are replaced.
        ///   - length: The length of the response's whole body.
        init?(_ outcome: RangeRequest.Outcome, headers: HTTPHeaders, length: Int) {
            var headers = headers
            headers.remove(name: "content-length")
            headers.remove(name: "content-range")
            switch outcome {
            case .full:
                return nil
            case .unsatisfiable:
                // RFC 9110 §15.5.17.
                headers.remove(name: "content-type")
                headers.add(name: "Content-Range", value: "bytes */\(length)")
                headers.add(name: "Content-Length", value: "0")
                self.init(status: 416, headers: headers, pieces: [])
            case .ranges(let ranges) where ranges.count == 1:
                // RFC 9110 §14.4, §15.3.7.1.
                let range = ranges[0]
                headers.add(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound)/\(length)")
                headers.add(name: "Content-Length", value: String(range.count))
                self.init(status: 206, headers: headers, pieces: [.bytes(range)])
            case .ranges(let ranges):
                // RFC 9110 §14.6, §15.3.7.2.
                let boundary = "stash-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                let contentType = headers.first(name: "content-type")
                var pieces: [Piece] = []
                var total = 0
                for range in ranges {
                    var part = "\r\n--\(boundary)\r\n"
                    if let contentType { part += "Content-Type: \(contentType)\r\n" }
                    part += "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(length)\r\n\r\n"
                    pieces.append(.text(ByteBuffer(string: part)))
                    pieces.append(.bytes(range))
                    total += part.utf8.count + range.count
                }
                let closing = "\r\n--\(boundary)--\r\n"
                pieces.append(.text(ByteBuffer(string: closing)))
                total += closing.utf8.count
                headers.remove(name: "content-type")
                headers.add(name: "Content-Type", value: "multipart/byteranges; boundary=\(boundary)")
                headers.add(name: "Content-Length", value: String(total))
                self.init(status: 206, headers: headers, pieces: pieces)
            }
        }

        /// The whole response (`200`) as one piece: for a `Range` that does not apply (RFC 9110
        /// §13.1.5, §14.2), sent as its body arrives like a range.
        static func whole(headers: HTTPHeaders, length: Int) -> RangeAnswer {
            var headers = headers
            headers.remove(name: "content-range")
            headers.replaceOrAdd(name: "Content-Length", value: String(length))
            return RangeAnswer(status: 200, headers: headers, pieces: length > 0 ? [.bytes(0...(length - 1))] : [])
        }

        private init(status: Int, headers: HTTPHeaders, pieces: [Piece]) {
            self.status = status
            self.headers = headers
            self.pieces = pieces
        }

        /// Whether the body's ranges come in the order of the body's bytes, without overlapping:
        /// then the answer can be cut from the body as it arrives, in one pass.
        var isInBodyOrder: Bool {
            var next = 0
            for case .bytes(let range) in pieces {
                guard range.lowerBound >= next else { return false }
                next = range.upperBound + 1
            }
            return true
        }

        /// Cuts an answer whose ranges are in body order (``isInBodyOrder``) from the response's
        /// body as it arrives, chunk by chunk: each chunk gives the bytes of the answer it holds.
        struct Cutter {
            private let pieces: [Piece]
            private var index = 0
            /// Where the next chunk starts in the response's body.
            private var offset = 0

            init(_ answer: RangeAnswer) {
                precondition(answer.isInBodyOrder, "a range answer cut in one pass needs its ranges in body order")
                self.pieces = answer.pieces
            }

            /// Whether every byte of the answer was given out.
            var isComplete: Bool { index == pieces.count }

            /// The bytes of the answer that `chunk`, the next bytes of the response's body, completes
            /// or holds, in order (the parts' own text included).
            mutating func cut(_ chunk: ByteBuffer) -> [ByteBuffer] {
                let start = offset
                let end = offset + chunk.readableBytes  // exclusive
                offset = end
                var out: [ByteBuffer] = []
                while index < pieces.count {
                    switch pieces[index] {
                    case .text(let text):
                        out.append(text)
                        index += 1
                    case .bytes(let range):
                        guard range.lowerBound < end else { return out }
                        let from = max(range.lowerBound, start)
                        let upTo = min(range.upperBound + 1, end)
                        if from < upTo,
                            let slice = chunk.getSlice(at: chunk.readerIndex + from - start, length: upTo - from)
                        {
                            out.append(slice)
                        }
                        guard range.upperBound < end else { return out }
                        index += 1
                    }
                }
                return out
            }
        }
    }
#endif
