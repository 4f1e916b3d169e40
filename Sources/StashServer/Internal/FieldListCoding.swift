#if Serve
    import Foundation

    /// The JSON text a stored response's header fields and `Vary` values are kept in within disk
    /// and shared tier metadata, written and read without `JSONEncoder` and `JSONDecoder`.
    ///
    /// Every miss that is stored encodes them and every disk or shared hit decodes them: Foundation's
    /// coders cost more than the rest of the metadata together. The text is the same JSON (an array
    /// of `[name, value]` arrays; an object of `name: value`), so entries written by either side
    /// read back on the other; text the fast reader does not expect (escapes other than the common
    /// ones, white space) goes to `JSONDecoder`.
    enum FieldListCoding {
        /// The value of one hexadecimal digit (either case), or `nil` for any other byte.
        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        /// `[["name","value"],…]`.
        static func encode(pairs: some Sequence<(name: String, value: String)>) -> String {
            var out = [UInt8]()
            out.reserveCapacity(256)
            out.append(UInt8(ascii: "["))
            var first = true
            for (name, value) in pairs {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(UInt8(ascii: "["))
                appendString(name, to: &out)
                out.append(UInt8(ascii: ","))
                appendString(value, to: &out)
                out.append(UInt8(ascii: "]"))
            }
            out.append(UInt8(ascii: "]"))
            return String(decoding: out, as: UTF8.self)
        }

        /// `{"name":"value",…}`, keys sorted (the order is not significant).
        static func encode(dictionary: [String: String]) -> String {
            guard !dictionary.isEmpty else { return "{}" }
            var out = [UInt8]()
            out.append(UInt8(ascii: "{"))
            var first = true
            for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                appendString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                appendString(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
            return String(decoding: out, as: UTF8.self)
        }

        /// The pairs of ``encode(pairs:)``'s text (or any JSON array of string arrays); `nil` when
        /// the text is not such JSON.
        static func decodePairs(_ text: String) -> [[String]]? {
            var text = text
            let fast = text.withUTF8 { bytes -> [[String]]? in
                var reader = Reader(bytes: bytes)
                return reader.pairs()
            }
            if let fast { return fast }
            return try? JSONDecoder().decode([[String]].self, from: Data(text.utf8))
        }

        /// The dictionary of ``encode(dictionary:)``'s text (or any JSON object of strings).
        static func decodeDictionary(_ text: String) -> [String: String]? {
            if text == "{}" { return [:] }
            var text = text
            let fast = text.withUTF8 { bytes -> [String: String]? in
                var reader = Reader(bytes: bytes)
                return reader.dictionary()
            }
            if let fast { return fast }
            return try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))
        }

        private static let hex = Array("0123456789abcdef".utf8)

        private static func appendString(_ string: String, to out: inout [UInt8]) {
            out.append(UInt8(ascii: "\""))
            for byte in string.utf8 {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0..<0x20:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30])
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }

        /// A reader of the exact shapes the encoder writes; any surprise returns `nil`.
        private struct Reader {
            let bytes: UnsafeBufferPointer<UInt8>
            var index = 0

            init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

            mutating func take(_ byte: UInt8) -> Bool {
                guard index < bytes.count, bytes[index] == byte else { return false }
                index += 1
                return true
            }

            mutating func pairs() -> [[String]]? {
                guard take(UInt8(ascii: "[")) else { return nil }
                var result = [[String]]()
                if take(UInt8(ascii: "]")) { return index == bytes.count ? result : nil }
                repeat {
                    guard take(UInt8(ascii: "[")) else { return nil }
                    var element = [String]()
                    if !take(UInt8(ascii: "]")) {
                        repeat {
                            guard let string = string() else { return nil }
                            element.append(string)
                        } while take(UInt8(ascii: ","))
                        guard take(UInt8(ascii: "]")) else { return nil }
                    }
                    result.append(element)
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")), index == bytes.count else { return nil }
                return result
            }

            mutating func dictionary() -> [String: String]? {
                guard take(UInt8(ascii: "{")) else { return nil }
                var result = [String: String]()
                if take(UInt8(ascii: "}")) { return index == bytes.count ? result : nil }
                repeat {
                    guard let name = string(), take(UInt8(ascii: ":")), let value = string() else { return nil }
                    result[name] = value
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")), index == bytes.count else { return nil }
                return result
            }

            /// A string with the escapes `\"`, `\\`, `\/` and `\u00XX`.
            mutating func string() -> String? {
                guard take(UInt8(ascii: "\"")) else { return nil }
                let start = index
                var hasEscape = false
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        hasEscape = true
                        index += 1
                    }
                    index += 1
                }
                guard index < bytes.count else { return nil }
                let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard hasEscape else { return String(decoding: raw, as: UTF8.self) }
                var out = [UInt8]()
                out.reserveCapacity(raw.count)
                var i = 0
                while i < raw.count {
                    let byte = raw[i]
                    guard byte == UInt8(ascii: "\\") else {
                        out.append(byte)
                        i += 1
                        continue
                    }
                    guard i + 1 < raw.count else { return nil }
                    switch raw[i + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                        out.append(raw[i + 1])
                        i += 2
                    case UInt8(ascii: "u"):
                        // Only the control characters the encoder writes; others go to JSONDecoder.
                        guard i + 5 < raw.count, raw[i + 2] == 0x30, raw[i + 3] == 0x30,
                            let high = FieldListCoding.hexValue(raw[i + 4]),
                            let low = FieldListCoding.hexValue(raw[i + 5]),
                            high < 2
                        else { return nil }
                        out.append(high << 4 | low)
                        i += 6
                    default:
                        return nil
                    }
                }
                return String(decoding: out, as: UTF8.self)
            }
        }
    }
#endif
