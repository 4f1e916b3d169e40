/// A Structured Field Dictionary (RFC 8941 §3.2, §4.2.2), parsed just far enough for targeted
/// cache-control fields (RFC 9213 §2.1): each member's key and value, parameters dropped.
///
/// Strict, as RFC 8941 §4.2 requires: any syntax error (an upper-case key, a space around `=`,
/// an unknown item type, an integer of more than 15 digits, a trailing comma) fails the whole
/// field, which the caller then ignores.
struct StructuredDictionary {
    /// A member's value.
    enum Value: Equatable {
        /// `?1`, `?0`, or a key without `=` (true).
        case boolean(Bool)
        /// An sf-string, unescaped.
        case string(String)
        /// Any other item (integer, decimal, token, byte sequence) or inner list, as written.
        case other(String)
    }

    /// The members in order of first appearance; a repeated key keeps its last value (§4.2.2).
    private(set) var members: [(key: String, value: Value)] = []

    /// Parses the lines of one field, combined as RFC 8941 §4.2 says (joined with `,`); `nil`
    /// on any syntax error.
    init?(lines: [String]) {
        var parser = Parser(bytes: Array(lines.joined(separator: ",").utf8))
        parser.skipSpaces()
        while !parser.isAtEnd {
            guard let key = parser.key() else { return nil }
            var value = Value.boolean(true)
            if parser.skip(0x3D) {
                guard let parsed = parser.memberValue() else { return nil }
                value = parsed
            }
            guard parser.parameters() else { return nil }
            if let index = members.firstIndex(where: { $0.key == key }) {
                members[index].value = value
            } else {
                members.append((key, value))
            }
            parser.skipOptionalWhitespace()
            if parser.isAtEnd { break }
            guard parser.skip(0x2C) else { return nil }
            parser.skipOptionalWhitespace()
            if parser.isAtEnd { return nil }
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }
        private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skip(_ byte: UInt8) -> Bool {
            guard next == byte else { return false }
            index += 1
            return true
        }

        mutating func skipSpaces() {
            while next == 0x20 { index += 1 }
        }

        mutating func skipOptionalWhitespace() {
            while next == 0x20 || next == 0x09 { index += 1 }
        }

        /// `key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`.
        mutating func key() -> String? {
            guard let first = next, Self.isLowercase(first) || first == 0x2A else { return nil }
            let start = index
            while let byte = next,
                Self.isLowercase(byte) || Self.isDigit(byte) || [0x5F, 0x2D, 0x2E, 0x2A].contains(byte)
            {
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// An item or an inner list, parameters excluded.
        mutating func memberValue() -> Value? {
            guard next == 0x28 else { return bareItem() }
            let start = index
            index += 1
            while true {
                skipSpaces()
                if skip(0x29) { return .other(String(decoding: bytes[start..<index], as: UTF8.self)) }
                guard bareItem() != nil, parameters() else { return nil }
                guard next == 0x20 || next == 0x29 else { return nil }
            }
        }

        /// `*( ";" *SP parameter )`, values checked and dropped; `false` on a syntax error.
        mutating func parameters() -> Bool {
            while skip(0x3B) {
                skipSpaces()
                guard key() != nil else { return false }
                if skip(0x3D), bareItem() == nil { return false }
            }
            return true
        }

        /// An integer, decimal, string, token, byte sequence or boolean (RFC 8941 §4.2.3.1).
        mutating func bareItem() -> Value? {
            guard let first = next else { return nil }
            let start = index
            switch first {
            case 0x2D, 0x30...0x39:
                guard number() else { return nil }
            case 0x22:
                return string()
            case 0x2A, 0x41...0x5A, 0x61...0x7A:
                index += 1
                while let byte = next, Self.isTokenByte(byte) || byte == 0x3A || byte == 0x2F { index += 1 }
            case 0x3A:
                index += 1
                while let byte = next, byte != 0x3A {
                    guard
                        Self.isDigit(byte) || Self.isLowercase(byte) || (0x41...0x5A).contains(byte)
                            || [0x2B, 0x2F, 0x3D].contains(byte)
                    else { return nil }
                    index += 1
                }
                guard skip(0x3A) else { return nil }
            case 0x3F:
                index += 1
                if skip(0x31) { return .boolean(true) }
                if skip(0x30) { return .boolean(false) }
                return nil
            default:
                return nil
            }
            return .other(String(decoding: bytes[start..<index], as: UTF8.self))
        }

        /// `["-"] 1*15DIGIT` or `["-"] 1*12DIGIT "." 1*3DIGIT`.
        private mutating func number() -> Bool {
            _ = skip(0x2D)
            var integerDigits = 0
            while let byte = next, Self.isDigit(byte) {
                integerDigits += 1
                index += 1
            }
            guard integerDigits > 0 else { return false }
            guard skip(0x2E) else { return integerDigits <= 15 }
            var fractionDigits = 0
            while let byte = next, Self.isDigit(byte) {
                fractionDigits += 1
                index += 1
            }
            return integerDigits <= 12 && (1...3).contains(fractionDigits)
        }

        /// `DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE`, printable ASCII only.
        private mutating func string() -> Value? {
            index += 1
            var content: [UInt8] = []
            while let byte = next {
                index += 1
                switch byte {
                case 0x22:
                    return .string(String(decoding: content, as: UTF8.self))
                case 0x5C:
                    guard let escaped = next, escaped == 0x22 || escaped == 0x5C else { return nil }
                    content.append(escaped)
                    index += 1
                case 0x20...0x7E:
                    content.append(byte)
                default:
                    return nil
                }
            }
            return nil
        }

        private static func isLowercase(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
        private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        /// `tchar` (RFC 9110 §5.6.2).
        private static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                true
            default: false
            }
        }
    }
}
