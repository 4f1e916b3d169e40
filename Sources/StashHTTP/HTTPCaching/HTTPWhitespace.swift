/// Optional whitespace (`OWS`, RFC 9110 §5.6.3) handling without Foundation, whose
/// `trimmingCharacters(in:)` goes through `NSString` on Linux and dominated the cost of a
/// cache decision.
extension StringProtocol where UTF8View: BidirectionalCollection {
    /// The text without leading and trailing spaces and tabs.
    var trimmingHTTPWhitespace: String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
        let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })!
        if first == bytes.startIndex && bytes.index(after: last) == bytes.endIndex, let string = self as? String {
            return string
        }
        return String(self[first...last])
    }
}

extension String {
    /// The comma-separated members of a list-based field value (RFC 9110 §5.6.1), trimmed,
    /// empty ones dropped.
    var httpListMembers: [String] {
        split(separator: ",").compactMap {
            let member = $0.trimmingHTTPWhitespace
            return member.isEmpty ? nil : member
        }
    }
}

extension String {
    /// The text with ASCII letters lowercased; itself, without copying, when it has no capital.
    var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return self }
        return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
