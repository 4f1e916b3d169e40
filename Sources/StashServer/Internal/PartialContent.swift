#if Serve
    import Foundation
    import NIOHTTP1
    import StashHTTP

    /// The rules for storing `206 (Partial Content)` responses and combining them (RFC 9111 §3.3,
    /// §3.4; RFC 9110 §14.4, §15.3.7): what a `206` holds, which validator ties pieces together,
    /// and which bytes a URL's stored pieces hold.
    enum PartialContent {
        /// The most separate byte runs one URL's partial entry keeps; a piece that would make more
        /// replaces them.
        static let maximumRuns = 16

        /// The stored field that records a partial entry's complete length and held runs
        /// (`N a-b,c-d`); never sent to a client or an origin.
        static let heldField = "Stash-Partial-Content"

        /// The validator that ties the pieces of one representation together (RFC 9110 §8.8).
        enum Validator: Equatable {
            /// No `ETag` and no `Last-Modified`: the piece can be stored and reused alone, never
            /// combined (RFC 9111 §3.4 needs the same strong validator).
            case none
            /// A weak entity tag, or a `Last-Modified` less than 60 seconds before `Date`
            /// (§8.8.2.2): such a piece is not stored at all.
            case weak
            /// A strong entity tag, or a strong `Last-Modified` date; `ifRange` is what an
            /// `If-Range` sends for it (§13.1.5).
            case strong(ifRange: String)
        }

        /// RFC 9110 §8.8.2.2, §8.8.3: a response's validator, the entity tag first.
        static func validator(_ headers: HTTPHeaders) -> Validator {
            let etags = headers["etag"]
            if !etags.isEmpty {
                let etag = etags[0].trimmingCharacters(in: .whitespaces)
                guard etags.count == 1, etag.hasPrefix("\"") else { return .weak }
                return .strong(ifRange: etag)
            }
            guard let modified = headers.first(name: "last-modified") else { return .none }
            guard let date = headers.first(name: "date").flatMap(HTTPCachePolicy.parseHTTPDate),
                let time = HTTPCachePolicy.parseHTTPDate(modified), date.timeIntervalSince(time) >= 60
            else { return .weak }
            return .strong(ifRange: modified)
        }

        /// What a `206` holds: one range of a representation of known complete length.
        struct Piece: Equatable {
            var range: ClosedRange<Int>
            var completeLength: Int
        }

        /// RFC 9110 §14.4: the one `Content-Range: bytes a-b/N` of a single-part `206`; `nil` for
        /// several parts, an unknown complete length (`*`), another unit, or an invalid range.
        static func piece(_ headers: HTTPHeaders) -> Piece? {
            let lines = headers["content-range"]
            guard lines.count == 1 else { return nil }
            let value = lines[0].trimmingCharacters(in: .whitespaces)
            guard value.lowercased().hasPrefix("bytes ") else { return nil }
            let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
            let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
            guard halves.count == 2, let length = number(halves[1]) else { return nil }
            let ends = halves[0].split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let first = number(ends[0]), let last = number(ends[1]), first <= last,
                last < length
            else { return nil }
            return Piece(range: first...last, completeLength: length)
        }

        private static func number(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), text.count < 19 else {
                return nil
            }
            return Int(text)
        }

        /// The runs `ranges` make, sorted, with overlapping and adjacent ones joined.
        static func runs(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
            var out: [ClosedRange<Int>] = []
            for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = out.last, range.lowerBound <= last.upperBound + 1 {
                    out[out.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
                } else {
                    out.append(range)
                }
            }
            return out
        }

        /// The bytes of `0..<length` that `held` (sorted disjoint runs) lacks, as runs.
        static func missing(_ held: [ClosedRange<Int>], length: Int) -> [ClosedRange<Int>] {
            var out: [ClosedRange<Int>] = []
            var next = 0
            for run in held {
                if run.lowerBound > next { out.append(next...(run.lowerBound - 1)) }
                next = max(next, run.upperBound + 1)
            }
            if next < length { out.append(next...(length - 1)) }
            return out
        }

        /// The `held` field's value for a complete length and runs.
        static func heldValue(completeLength: Int, runs: [ClosedRange<Int>]) -> String {
            "\(completeLength) " + runs.map { "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",")
        }

        /// Parses ``heldValue(completeLength:runs:)``; `nil` unless the runs are sorted, disjoint
        /// and inside the complete length.
        static func parseHeld(_ value: String) -> (completeLength: Int, runs: [ClosedRange<Int>])? {
            let parts = value.split(separator: " ")
            guard parts.count == 2, let length = number(parts[0]) else { return nil }
            var runs: [ClosedRange<Int>] = []
            for item in parts[1].split(separator: ",") {
                let ends = item.split(separator: "-", omittingEmptySubsequences: false)
                let previous = runs.last?.upperBound ?? -1
                guard ends.count == 2, let first = number(ends[0]), let last = number(ends[1]), first <= last,
                    length > last, first > previous
                else { return nil }
                runs.append(first...last)
            }
            return runs.isEmpty ? nil : (length, runs)
        }

        /// The `Range` value that asks for `gap` of a representation of `completeLength` bytes.
        static func rangeValue(_ gap: ClosedRange<Int>, completeLength: Int) -> String {
            gap.upperBound == completeLength - 1
                ? "bytes=\(gap.lowerBound)-" : "bytes=\(gap.lowerBound)-\(gap.upperBound)"
        }
    }
#endif
