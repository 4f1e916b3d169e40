/// A reader of the one JSON shape the disk tier stores for ``DiskCache/Metadata/extra``: an object
/// whose values are all strings.
///
/// It takes every escape JSON allows (RFC 8259 §7), surrogate pairs included, and answers `nil`
/// for anything else (another shape, invalid UTF-8, a lone surrogate, trailing bytes), so that the
/// caller can hand such text to `JSONDecoder` and get exactly its answer.
enum ExtraJSON {
    /// The object's members, or `nil` when `text` is not a JSON object of strings this reads.
    static func objectOfStrings(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            return reader.object()
        }
    }

    /// `extra` as a JSON object of strings, the text `JSONDecoder` (and ``objectOfStrings(_:)``)
    /// reads back: `"`, `\` and control characters escaped, everything else as it is, in UTF-8.
    static func text(_ extra: [String: String]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(extra.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for (name, value) in extra {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            append(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            append(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string` to `bytes` as a JSON string (RFC 8259 §7), quotes included: runs of bytes
    /// that need no escape are copied whole, so that a long header text costs one copy, not a
    /// uniqueness check per byte.
    static func append(_ string: String, to bytes: inout [UInt8]) {
        var string = string
        string.withUTF8 { source in
            bytes.append(0x22)
            var start = 0
            for (index, byte) in source.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[start..<index])) }
                start = index + 1
                // Byte by byte: an array literal here cost an allocation per escape, and a stored
                // response's head has two escapes per header line, four once the sidecar escapes it.
                bytes.append(0x5C)
                switch byte {
                case 0x22, 0x5C: bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    bytes.append(UInt8(ascii: "u"))
                    bytes.append(0x30)
                    bytes.append(0x30)
                    bytes.append(hexDigits[Int(byte >> 4)])
                    bytes.append(hexDigits[Int(byte & 0xF)])
                }
            }
            if start < source.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[start...])) }
            bytes.append(0x22)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func object() -> [String: String]? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var result: [String: String] = [:]
            skipSpace()
            if !take(UInt8(ascii: "}")) {
                while true {
                    skipSpace()
                    guard let name = string() else { return nil }
                    skipSpace()
                    guard take(UInt8(ascii: ":")) else { return nil }
                    skipSpace()
                    guard let value = string() else { return nil }
                    result[name] = value
                    skipSpace()
                    if take(UInt8(ascii: ",")) { continue }
                    guard take(UInt8(ascii: "}")) else { return nil }
                    break
                }
            }
            skipSpace()
            return index == bytes.count ? result : nil
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// A JSON string at the cursor, decoded.
        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count, bytes[index] != 0x22, bytes[index] != 0x5C, bytes[index] >= 0x20 {
                index += 1
            }
            guard index < bytes.count else { return nil }
            if bytes[index] == 0x22 {
                defer { index += 1 }
                return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
            var decoded = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case 0x22:
                    return String(validating: decoded, as: UTF8.self)
                case 0x5C:
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case 0x22, 0x5C, 0x2F: decoded.append(escape)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        decoded.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20:
                    return nil
                default:
                    decoded.append(byte)
                }
            }
            return nil
        }

        /// The scalar of a `\u` escape whose `u` was read: four hex digits, or a surrogate pair.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let unit = hex4() else { return nil }
            switch unit {
            case 0xD800..<0xDC00:
                guard take(0x5C), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else {
                    return nil
                }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00..<0xE000:
                return nil
            default:
                return Unicode.Scalar(unit)
            }
        }

        private mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                index += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}
