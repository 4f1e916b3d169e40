import Foundation

/// The directives of the `Cache-Control` header lines of a request or response (RFC 9111 §5.2).
///
/// Parsed per the field's grammar (RFC 9111 §5.2, RFC 9110 §5.6): a comma-separated list of
/// `name` or `name=value` members over all the lines, where a value is a token or a quoted
/// string (which may contain commas and `\`-escapes). Names compare without case. A member
/// whose name is not a token (`max-age =60`) is ignored.
///
/// The typed accessors follow RFC 9111 §4.2.1's guidance for bad input:
/// * a directive given twice counts by its first occurrence (`max-age=60, max-age=1` is 60s);
/// * an argument that is not `1*DIGIT` (`max-age=soon`, `max-age='60'`, `max-age= 60`) makes a
///   freshness directive zero, so the response is stale rather than cached for longer than meant;
/// * a number too large is 2³¹ seconds (§1.2.2);
/// * the list forms `no-cache`, `private` are unqualified (the whole response) as soon as one
///   occurrence has no argument; otherwise the union of the field names their arguments list.
public struct HTTPCacheControl: Sendable, Hashable {
    /// One member of the list.
    public struct Directive: Sendable, Hashable {
        /// The name, lowercased.
        public var name: String
        /// The argument with quotes and escapes removed, or `nil` when there is none.
        public var argument: String?
        /// Whether the argument was a quoted string.
        public var isQuoted: Bool

        /// Creates a directive.
        public init(name: String, argument: String? = nil, isQuoted: Bool = false) {
            self.init(lowercasedName: name.lowercased(), argument: argument, isQuoted: isQuoted)
        }

        init(lowercasedName: String, argument: String?, isQuoted: Bool) {
            self.name = lowercasedName
            self.argument = argument
            self.isQuoted = isQuoted
        }
    }

    /// Every directive, in order, duplicates included.
    public var directives: [Directive]

    /// The largest number of seconds a delta-seconds argument is taken to mean (RFC 9111 §1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// Parses one header value, such as `public, max-age=3600, no-cache="Set-Cookie"`; `nil`
    /// gives no directive.
    ///
    /// - Complexity: O(*n*) in the value's length.
    public init(parsing value: String?) {
        directives = []
        if let value { Self.parse(value, into: &directives) }
    }

    /// Parses every `Cache-Control` line of `fields`, in order.
    ///
    /// - Complexity: O(*n*) in the lines' length.
    public init(_ fields: HTTPFields) {
        directives = []
        for line in fields.values(for: "Cache-Control") { Self.parse(line, into: &directives) }
    }

    /// Whether the directive `name` (any case) occurs, with or without an argument.
    public func contains(_ name: String) -> Bool {
        let name = name.lowercased()
        return directives.contains { $0.name == name }
    }

    /// The first occurrence of `name` (any case).
    public func first(_ name: String) -> Directive? {
        let name = name.lowercased()
        return directives.first { $0.name == name }
    }

    /// The first occurrence of `name` as a number of seconds: `nil` when absent, zero when its
    /// argument is missing or not `1*DIGIT`, at most ``maximumDeltaSeconds``.
    public func seconds(_ name: String) -> Duration? {
        guard let directive = first(name) else { return nil }
        return .seconds(Self.deltaSeconds(directive.argument) ?? 0)
    }

    // MARK: Response directives (§5.2.2)

    /// `max-age=N` (§5.2.2.1): fresh for N seconds.
    public var maxAge: Duration? { seconds("max-age") }
    /// `s-maxage=N` (§5.2.2.10): fresh for N seconds in a shared cache, in place of `max-age`
    /// and `Expires`; implies `proxy-revalidate`.
    public var sharedMaxAge: Duration? { seconds("s-maxage") }
    /// `no-store` (§5.2.2.5, and §5.2.1.5 in a request): never store.
    public var noStore: Bool { contains("no-store") }
    /// Unqualified `no-cache` (§5.2.2.4, and §5.2.1.4 in a request): revalidate before every use.
    public var noCache: Bool { directives.contains { $0.name == "no-cache" && $0.argument == nil } }
    /// The field names of qualified `no-cache="a, b"` (§5.2.2.4), lowercased: they may not be
    /// served without revalidation; empty when there is none (or `no-cache` is unqualified).
    public var noCacheFields: [String] { fieldNames(of: "no-cache") }
    /// Unqualified `private` (§5.2.2.7): a shared cache must not store the response.
    public var isPrivate: Bool { directives.contains { $0.name == "private" && $0.argument == nil } }
    /// The field names of qualified `private="a, b"` (§5.2.2.7), lowercased: a shared cache
    /// may store the response without them.
    public var privateFields: [String] { fieldNames(of: "private") }
    /// `public` (§5.2.2.9): storable even where it would not otherwise be (`Authorization`, a
    /// status that is not heuristically cacheable).
    public var isPublic: Bool { contains("public") }
    /// `must-revalidate` (§5.2.2.2): never served stale.
    public var mustRevalidate: Bool { contains("must-revalidate") }
    /// `proxy-revalidate` (§5.2.2.8): never served stale by a shared cache.
    public var proxyRevalidate: Bool { contains("proxy-revalidate") }
    /// `must-understand` (§5.2.2.3): stored only by a cache that understands the status code.
    public var mustUnderstand: Bool { contains("must-understand") }
    /// `no-transform` (§5.2.2.6): intermediaries must not transform the content.
    public var noTransform: Bool { contains("no-transform") }
    /// `immutable` (RFC 8246): the body will not change while fresh.
    public var isImmutable: Bool { contains("immutable") }
    /// `stale-if-error=N` (RFC 5861 §4): servable N seconds past freshness when the origin fails;
    /// `nil` when absent or malformed.
    public var staleIfError: Duration? { optionalSeconds("stale-if-error") }
    /// `stale-while-revalidate=N` (RFC 5861 §3): servable N seconds past freshness while a
    /// background request revalidates; `nil` when absent or malformed.
    public var staleWhileRevalidate: Duration? { optionalSeconds("stale-while-revalidate") }

    // MARK: Request directives (§5.2.1)

    /// `max-stale[=N]` (§5.2.1.2): the client accepts a response stale by up to N seconds.
    ///
    /// `.some(nil)` for `max-stale` without a number (any staleness). A malformed number is 0.
    public var maxStale: Duration?? {
        guard let directive = first("max-stale") else { return nil }
        guard let argument = directive.argument else { return .some(nil) }
        return .some(.seconds(Self.deltaSeconds(argument) ?? 0))
    }
    /// `min-fresh=N` (§5.2.1.3): the client wants a response fresh for N more seconds; `nil`
    /// when absent or malformed.
    public var minFresh: Duration? { optionalSeconds("min-fresh") }
    /// `only-if-cached` (§5.2.1.7): answer from the cache or with `504`.
    public var onlyIfCached: Bool { contains("only-if-cached") }

    // MARK: Parsing

    private func optionalSeconds(_ name: String) -> Duration? {
        guard let directive = first(name), let seconds = Self.deltaSeconds(directive.argument) else { return nil }
        return .seconds(seconds)
    }

    private func fieldNames(of name: String) -> [String] {
        var names: [String] = []
        for directive in directives where directive.name == name {
            guard let argument = directive.argument else { return [] }
            for field in argument.split(separator: ",") {
                let field = field.trimmingHTTPWhitespace.lowercased()
                if !field.isEmpty && !names.contains(field) { names.append(field) }
            }
        }
        return names
    }

    /// A delta-seconds argument (`1*DIGIT`, RFC 9111 §1.2.2), capped at 2³¹; `nil` when absent or
    /// malformed.
    static func deltaSeconds(_ argument: String?) -> Int? {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(argument).map { min($0, maximumDeltaSeconds) } ?? maximumDeltaSeconds
    }

    /// Parses one line's members into `directives`.
    private static func parse(_ line: String, into directives: inout [Directive]) {
        let bytes = Array(line.utf8)
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
        }
        func skipToComma() {
            while index < bytes.count, bytes[index] != 0x2C { index += 1 }
        }
        while index < bytes.count {
            skipWhitespace()
            guard index < bytes.count else { break }
            if bytes[index] == 0x2C {
                index += 1
                continue
            }
            let nameStart = index
            while index < bytes.count, isTokenByte(bytes[index]) { index += 1 }
            let nameBytes = bytes[nameStart..<index]
            let name =
                nameBytes.contains(where: { $0 >= 0x41 && $0 <= 0x5A })
                ? String(decoding: nameBytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
                : String(decoding: nameBytes, as: UTF8.self)
            let afterName = index
            skipWhitespace()
            if name.isEmpty || (index < bytes.count && bytes[index] != 0x2C && bytes[index] != 0x3D)
                || (index < bytes.count && bytes[index] == 0x3D && index != afterName)
            {
                skipMember(bytes, &index)  // not a token, or whitespace before "=": not a directive
                continue
            }
            guard index < bytes.count, bytes[index] == 0x3D else {
                directives.append(Directive(lowercasedName: name, argument: nil, isQuoted: false))
                continue
            }
            index += 1
            if index < bytes.count, bytes[index] == 0x22 {
                index += 1
                var value: [UInt8] = []
                var closed = false
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    if byte == 0x5C, index < bytes.count {
                        value.append(bytes[index])
                        index += 1
                    } else if byte == 0x22 {
                        closed = true
                        break
                    } else {
                        value.append(byte)
                    }
                }
                skipToComma()
                if closed {
                    directives.append(
                        Directive(
                            lowercasedName: name, argument: String(decoding: value, as: UTF8.self), isQuoted: true))
                }
            } else {
                let valueStart = index
                skipToComma()
                var valueEnd = index
                while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 {
                    valueEnd -= 1
                }
                // Kept even when malformed (`max-age= 60`), so that the accessors treat it as stale.
                directives.append(
                    Directive(
                        lowercasedName: name, argument: String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self),
                        isQuoted: false))
            }
        }
    }

    /// Skips the rest of a malformed member, quoted strings included, up to the next comma.
    private static func skipMember(_ bytes: [UInt8], _ index: inout Int) {
        var inQuotes = false
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes && byte == 0x5C {
                index += 2
                continue
            }
            if byte == 0x22 { inQuotes.toggle() }
            if byte == 0x2C && !inQuotes { return }
            index += 1
        }
    }

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
