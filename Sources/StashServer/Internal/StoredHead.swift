#if Serve
    import Foundation
    import NIOCore

    /// What a plain fresh disk hit needs of a stored response, kept as one member of its stored
    /// metadata (``CachedResponse/Field/head``) in a form that is cheap to read: the status, the
    /// two times, when it stops being fresh for a request without directives, its corrected
    /// initial age, its fields' size, and the head an HTTP/1.1 client gets, encoded.
    ///
    /// With it, a disk hit finds this one member of the entry's stored text and copies out the
    /// encoded head, instead of decoding every header field, building the policy's view of them,
    /// computing the freshness and encoding the head again (most of a disk hit's CPU before it).
    /// The header fields stay in the text too and are decoded only when something asks for them
    /// (a conditional request, a stale response, HTTP/1.0).
    ///
    /// The freshness and the initial age are derived by this build's ``ServePolicy`` when the
    /// response is stored, as nginx's cache keeps a stored response's validity in its file header.
    /// The record starts with its ``version``: a record of another version is not read (the full
    /// decode answers instead), so a change to how they are derived bumps it.
    ///
    /// Text: `VERSION STATUS REQUEST-TIME RESPONSE-TIME FRESH-UNTIL INITIAL-AGE FIELD-BYTES`, a line
    /// feed, then the encoded head. `STATUS` and `FIELD-BYTES` are decimal; the times (seconds
    /// since 1970) and the initial age (seconds) are the 16 hexadecimal digits of their `Double`'s
    /// bits, exact and read without `strtod`; `FRESH-UNTIL` is `-` for none.
    struct StoredHead {
        let status: Int
        let requestTime: Date
        let responseTime: Date
        let plainFreshUntil: Date?
        let initialAge: Duration
        let fieldBytes: Int
        /// The status line and header field lines, without `Age` and the blank line.
        let encodedHead: ByteBuffer

        /// The record's format; see the type's description.
        static let version = "1"

        /// ``CachedResponse/Field/head``'s bytes.
        private static let memberName = Array(CachedResponse.Field.head.utf8)

        /// The record of `response` (its value in the metadata).
        static func text(of response: CachedResponse) -> String {
            let initial = response.initialAge.components
            let initialSeconds = Double(initial.seconds) + Double(initial.attoseconds) * 1e-18
            var text = version
            text += " \(response.status) " + hex(response.requestTime.timeIntervalSince1970)
            text += " " + hex(response.responseTime.timeIntervalSince1970)
            text += " " + (response.plainFreshUntil.map { hex($0.timeIntervalSince1970) } ?? "-")
            text += " " + hex(initialSeconds) + " \(response.fieldBytes)\n"
            text += String(decoding: response.encodedHead.readableBytesView, as: UTF8.self)
            return text
        }

        /// A `Double`'s bits in 16 hexadecimal digits: exact, and read back without `strtod`.
        private static func hex(_ value: Double) -> String {
            let digits = String(value.bitPattern, radix: 16)
            return String(repeating: "0", count: 16 - digits.utf8.count) + digits
        }

        /// The record in an entry's stored `extra` text (the JSON object ``DiskCache`` stores),
        /// or `nil` when it has none, or one this build does not read, or the text is not the
        /// plain shape ``DiskCache`` writes (the full decode answers then).
        static func read(fromExtra text: String) -> StoredHead? {
            var text = text
            return text.withUTF8 { bytes -> StoredHead? in
                guard let value = Self.memberValue(named: Self.memberName, in: bytes) else { return nil }
                return Self.parse(value)
            }
        }

        /// The record from its unescaped bytes.
        private static func parse(_ buffer: ByteBuffer) -> StoredHead? {
            let fields = buffer.withUnsafeReadableBytes { bytes -> (Int, Double, Double, Double?, Double, Int, Int)? in
                var cursor = Cursor(bytes: bytes)
                guard cursor.word() == UInt64(version.utf8.first!), cursor.index == 1,
                    let status = cursor.decimal(), let requestTime = cursor.bits(), let responseTime = cursor.bits()
                else { return nil }
                var freshUntil: Double?
                if cursor.dash() {
                    freshUntil = nil
                } else {
                    guard let until = cursor.bits() else { return nil }
                    freshUntil = until
                }
                guard let initialAge = cursor.bits(), let fieldBytes = cursor.decimal(), cursor.isAtLineEnd,
                    requestTime.isFinite, responseTime.isFinite, initialAge.isFinite, freshUntil?.isFinite ?? true
                else { return nil }
                return (status, requestTime, responseTime, freshUntil, initialAge, fieldBytes, cursor.index + 1)
            }
            guard let fields else { return nil }
            var head = buffer
            head.moveReaderIndex(forwardBy: fields.6)
            return StoredHead(
                status: fields.0, requestTime: Date(timeIntervalSince1970: fields.1),
                responseTime: Date(timeIntervalSince1970: fields.2),
                plainFreshUntil: fields.3.map(Date.init(timeIntervalSince1970:)), initialAge: .seconds(fields.4),
                fieldBytes: fields.5, encodedHead: head)
        }

        /// Reads the record's first line: words separated by one space, ending in a line feed.
        private struct Cursor {
            let bytes: UnsafeRawBufferPointer
            var index = 0

            /// Whether the cursor is at the line feed that ends the line.
            var isAtLineEnd: Bool { index < bytes.count && bytes[index] == UInt8(ascii: "\n") }

            /// Steps over the space before a word (none before the first).
            private mutating func startWord() -> Bool {
                guard index > 0 else { return true }
                guard index < bytes.count, bytes[index] == UInt8(ascii: " ") else { return false }
                index += 1
                return true
            }

            /// A one-character word's byte (the version).
            mutating func word() -> UInt64? {
                guard startWord(), index < bytes.count else { return nil }
                defer { index += 1 }
                return UInt64(bytes[index])
            }

            /// A `-` word.
            mutating func dash() -> Bool {
                let start = index
                guard startWord(), index < bytes.count, bytes[index] == UInt8(ascii: "-") else {
                    index = start
                    return false
                }
                index += 1
                return true
            }

            /// A decimal word of at most 18 digits.
            mutating func decimal() -> Int? {
                guard startWord() else { return nil }
                var value = 0
                let start = index
                while index < bytes.count, index - start < 18, let digit = Self.digit(bytes[index]), digit < 10 {
                    value = value * 10 + Int(digit)
                    index += 1
                }
                return index > start ? value : nil
            }

            /// A word of 16 hexadecimal digits, the bits of a `Double`.
            mutating func bits() -> Double? {
                guard startWord(), bytes.count - index >= 16 else { return nil }
                var value: UInt64 = 0
                for _ in 0..<16 {
                    guard let digit = Self.digit(bytes[index]) else { return nil }
                    value = value << 4 | UInt64(digit)
                    index += 1
                }
                return Double(bitPattern: value)
            }

            /// A lower-case hexadecimal digit's value.
            static func digit(_ byte: UInt8) -> UInt8? {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
                default: nil
                }
            }
        }

        /// The unescaped value of the member named `name` of a flat JSON object of strings, as
        /// ``DiskCache`` writes it (no white space); `nil` when it is absent or the text has another
        /// shape or an escape this does not read.
        ///
        /// Skips the other members' values without decoding them: a scan for their closing quote.
        static func memberValue(named wanted: [UInt8], in bytes: UnsafeBufferPointer<UInt8>) -> ByteBuffer? {
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
            let count = bytes.count
            var index = 0
            guard count > 1, bytes[0] == UInt8(ascii: "{") else { return nil }
            index = 1
            while index < count, bytes[index] == quote {
                // The member's name: the proxy's names have no escapes.
                let nameStart = index + 1
                var nameEnd = nameStart
                while nameEnd < count, bytes[nameEnd] != quote, bytes[nameEnd] != backslash { nameEnd += 1 }
                guard nameEnd < count, bytes[nameEnd] == quote else { return nil }
                let isWanted =
                    nameEnd - nameStart == wanted.count
                    && wanted.withUnsafeBufferPointer {
                        memcmp(bytes.baseAddress! + nameStart, $0.baseAddress!, $0.count) == 0
                    }
                index = nameEnd + 1
                guard index + 1 < count, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == quote else {
                    return nil
                }
                index += 2
                if isWanted { return unescape(bytes, from: index) }
                // Another member's value: to its closing quote.
                while index < count, bytes[index] != quote { index += bytes[index] == backslash ? 2 : 1 }
                guard index < count else { return nil }
                index += 1
                guard index < count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else {
                    return nil  // `}`: no such member
                }
            }
            return nil
        }

        /// The JSON string that starts at `start` (after its opening quote), unescaped; `nil` for
        /// an escape other than the ones ``DiskCache``'s writer uses for a head's bytes.
        private static func unescape(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> ByteBuffer? {
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
            var out = ByteBufferAllocator().buffer(capacity: bytes.count - start)
            var index = start
            var runStart = start
            while index < bytes.count {
                let byte = bytes[index]
                if byte == quote {
                    out.writeBytes(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                    return out
                }
                guard byte == backslash else {
                    index += 1
                    continue
                }
                out.writeBytes(UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                guard index + 1 < bytes.count else { return nil }
                switch bytes[index + 1] {
                case quote, backslash, UInt8(ascii: "/"): out.writeInteger(bytes[index + 1])
                case UInt8(ascii: "n"): out.writeInteger(UInt8(0x0A))
                case UInt8(ascii: "r"): out.writeInteger(UInt8(0x0D))
                case UInt8(ascii: "t"): out.writeInteger(UInt8(0x09))
                case UInt8(ascii: "b"): out.writeInteger(UInt8(0x08))
                case UInt8(ascii: "f"): out.writeInteger(UInt8(0x0C))
                case UInt8(ascii: "u"):
                    // `\u00XX`, an ASCII control character; anything else goes to the full decode.
                    guard index + 5 < bytes.count, bytes[index + 2] == UInt8(ascii: "0"),
                        bytes[index + 3] == UInt8(ascii: "0"), let high = FieldListCoding.hexValue(bytes[index + 4]),
                        let low = FieldListCoding.hexValue(bytes[index + 5]), high < 8
                    else { return nil }
                    out.writeInteger(high << 4 | low)
                    index += 4
                default:
                    return nil
                }
                index += 2
                runStart = index
            }
            return nil
        }
    }
#endif
