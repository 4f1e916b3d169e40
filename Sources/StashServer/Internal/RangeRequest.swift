#if Serve
    import Foundation
    import NIOHTTP1
    import StashHTTP

    /// A client's `Range` (RFC 9110 §14.2) evaluated against a stored complete response: which byte
    /// ranges to send, or that the whole response (or a `416`) answers it.
    enum RangeRequest {
        /// What answers the request.
        enum Outcome: Equatable {
            /// The whole response: no `Range`, one that does not apply, or an `If-Range` that does not
            /// match (§13.1.5).
            case full
            /// `206 Partial Content` with these ranges, in the request's order (§14.2, §15.3.7).
            case ranges([ClosedRange<Int>])
            /// `416 Range Not Satisfiable` (§15.5.17).
            case unsatisfiable
        }

        /// The most ranges one request may ask for; more are answered with the whole response
        /// (§14.2 lets a server ignore a `Range` it finds abusive).
        static let maximumRanges = 64

        /// Evaluates the request's `Range` against `stored`.
        ///
        /// Only a `GET` of a stored `200` has ranges served from it; a `Range` that does not parse,
        /// or uses a unit other than `bytes`, is ignored (§14.2).
        static func evaluate(method: HTTPMethod, requestHeaders: HTTPHeaders, stored: CachedResponse) -> Outcome {
            guard method == .GET, stored.status == 200 else { return .full }
            let lines = requestHeaders["range"]
            guard lines.count == 1 else { return .full }
            if requestHeaders.contains(name: "if-range"), !ifRangeMatches(requestHeaders, stored: stored) {
                return .full
            }
            guard let specs = parse(lines[0]) else { return .full }
            guard specs.count <= maximumRanges else { return .full }
            let length = stored.bodyLength
            let ranges = specs.compactMap { resolve($0, length: length) }
            return ranges.isEmpty ? .unsatisfiable : .ranges(ranges)
        }

        /// One `byte-range-spec` or `suffix-byte-range-spec` (§14.1.2).
        enum Spec: Equatable {
            case from(Int, to: Int?)
            case suffix(Int)
        }

        /// The specs of a `Range` value, or `nil` when it is not a valid `bytes` range set.
        static func parse(_ value: String) -> [Spec]? {
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "="),
                trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes"
            else { return nil }
            var specs: [Spec] = []
            for part in trimmed[trimmed.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            {
                let item = part.trimmingCharacters(in: .whitespaces)
                if item.isEmpty { continue }  // §5.6.1: empty list elements are ignored
                guard let dash = item.firstIndex(of: "-") else { return nil }
                let first = item[..<dash]
                let last = item[item.index(after: dash)...]
                if first.isEmpty {
                    guard let count = digits(last) else { return nil }
                    specs.append(.suffix(count))
                } else {
                    guard let start = digits(first) else { return nil }
                    if last.isEmpty {
                        specs.append(.from(start, to: nil))
                    } else {
                        guard let end = digits(last), end >= start else { return nil }
                        specs.append(.from(start, to: end))
                    }
                }
            }
            return specs.isEmpty ? nil : specs
        }

        private static func digits(_ text: Substring) -> Int? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(text) ?? Int.max
        }

        /// A spec's bytes in a body of `length`, or `nil` when it is not satisfiable (§14.1.1).
        static func resolve(_ spec: Spec, length: Int) -> ClosedRange<Int>? {
            switch spec {
            case .from(let start, let end):
                guard start < length else { return nil }
                return start...min(end ?? (length - 1), length - 1)
            case .suffix(let count):
                guard count > 0, length > 0 else { return nil }
                return max(0, length - count)...(length - 1)
            }
        }

        /// RFC 9110 §13.1.5: an entity-tag matches by strong comparison; a date matches the stored
        /// `Last-Modified` exactly.
        private static func ifRangeMatches(_ requestHeaders: HTTPHeaders, stored: CachedResponse) -> Bool {
            guard let condition = requestHeaders.first(name: "if-range")?.trimmingCharacters(in: .whitespaces) else {
                return true
            }
            if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
                guard !condition.hasPrefix("W/"), let etag = stored.headers.first(name: "etag"),
                    !etag.hasPrefix("W/")
                else { return false }
                return etag.trimmingCharacters(in: .whitespaces) == condition
            }
            guard let date = HTTPCachePolicy.parseHTTPDate(condition),
                let modified = stored.headers.first(name: "last-modified").flatMap(HTTPCachePolicy.parseHTTPDate)
            else { return false }
            return date == modified
        }
    }
#endif
