import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The header fields of an HTTP message: ordered `(name, value)` lines, looked up by name
/// without regard to case (RFC 9110 §5.1).
///
/// A name may occur on several lines (`Cache-Control`, `Set-Cookie`, `Vary`); the lines keep
/// their order. The subscript joins the values of repeated lines with `", "`, as RFC 9110 §5.3
/// allows for list-based fields; ``values(for:)`` returns them line by line, which is what
/// single-valued fields that contain commas (`Expires`, `Date`, `Set-Cookie`) need.
///
/// ```swift
/// var fields: HTTPFields = ["Cache-Control": "max-age=60", "ETag": "\"v1\""]
/// fields.add("public", for: "cache-control")
/// fields["CACHE-CONTROL"]  // "max-age=60, public"
/// ```
///
/// Two values are equal when they hold the same lines in the same order, names compared
/// exactly as written.
public struct HTTPFields: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header line.
    public struct Field: Sendable, Hashable {
        /// The name, as written.
        public var name: String
        /// The value, without leading or trailing whitespace.
        public var value: String

        /// Creates a line.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty set of fields.
    public init() {
        fields = []
    }

    /// Creates fields from `(name, value)` lines, in order.
    public init(_ lines: some Sequence<(String, String)>) {
        fields = lines.map { Field(name: $0.0, value: Self.trimmed($0.1)) }
    }

    /// Creates fields from lines, in order.
    public init(_ lines: some Sequence<Field>) {
        fields = Array(lines)
    }

    /// Creates fields from a literal; a name written twice gives two lines.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The values of the lines named `name` (any case), joined with `", "`.
    ///
    /// `nil` when there is none. Setting replaces every such line with one (or removes them all
    /// for `nil`).
    ///
    /// - Complexity: O(*n*) in the number of lines.
    public subscript(name: String) -> String? {
        get {
            let values = values(for: name)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }
        set {
            if let newValue { set(newValue, for: name) } else { remove(name) }
        }
    }

    /// The values of the lines named `name` (any case), one per line, in order.
    ///
    /// - Complexity: O(*n*) in the number of lines.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.sameName($0.name, name) ? $0.value : nil }
    }

    /// Whether a line is named `name` (any case).
    ///
    /// - Complexity: O(*n*) in the number of lines.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    /// Appends a line, after any others of the same name.
    ///
    /// - Complexity: Amortised O(1).
    public mutating func add(_ value: String, for name: String) {
        fields.append(Field(name: name, value: Self.trimmed(value)))
    }

    /// Replaces the lines named `name` with one line, where the first of them was (or at the end).
    ///
    /// - Complexity: O(*n*) in the number of lines.
    public mutating func set(_ value: String, for name: String) {
        let field = Field(name: name, value: Self.trimmed(value))
        guard let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) else {
            fields.append(field)
            return
        }
        fields[first] = field
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if Self.sameName(fields[index].name, name) { fields.remove(at: index) } else { index += 1 }
        }
    }

    /// Removes every line named `name` (any case).
    ///
    /// - Complexity: O(*n*) in the number of lines.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// Removes every line whose name is in `names` (lowercased).
    ///
    /// - Complexity: O(*n*) in the number of lines.
    mutating func remove(lowercasedNames names: Set<String>) {
        guard !names.isEmpty else { return }
        fields.removeAll { names.contains($0.name.lowercased()) }
    }

    /// The number of lines.
    public var count: Int { fields.count }

    /// Whether there is no line.
    public var isEmpty: Bool { fields.isEmpty }

    /// The lines, in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// Whether two names are the same field, ignoring ASCII case, without allocating.
    static func sameName(_ lhs: String, _ rhs: String) -> Bool {
        if lhs == rhs { return true }
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while let a = left.next(), let b = right.next() {
            guard a != b else { continue }
            let lower = a | 0x20
            guard lower == b | 0x20, lower >= 0x61, lower <= 0x7A else { return false }
        }
        return true
    }

    private static func trimmed(_ value: String) -> String {
        value.trimmingHTTPWhitespace
    }

    /// The values of the lines named `name`, split into the members of a list (RFC 9110 §5.6.1).
    func listMembers(for name: String) -> [String] {
        values(for: name).flatMap(\.httpListMembers)
    }
}

extension HTTPFields {
    /// The header fields of `response`.
    ///
    /// Foundation joins repeated lines of one name into one value, so each name gives one line.
    public init(_ response: HTTPURLResponse) {
        var fields = HTTPFields()
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String else { continue }
            fields.add("\(value)", for: name)
        }
        // Sorted: a dictionary's order is random, and equal responses should give equal fields.
        self.init(fields.sorted { $0.name.lowercased() < $1.name.lowercased() })
    }

    /// The header fields of `request`.
    public init(_ request: URLRequest) {
        let lines = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        self.init(lines.map { ($0.key, $0.value) })
    }
}
