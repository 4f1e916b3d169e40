extension HTTPCacheControl {
    /// Directives that take delta-seconds: in a targeted field their value must be an Integer
    /// (RFC 9213 §2.1); any other type makes them malformed (a freshness of zero).
    private static let secondsDirectives: Set<String> = [
        "max-age", "s-maxage", "stale-while-revalidate", "stale-if-error",
    ]

    /// Parses the lines of a targeted cache-control field such as `CDN-Cache-Control`
    /// (RFC 9213 §2.1): a Structured Field Dictionary of the same directives as
    /// `Cache-Control`, such as `max-age=3600, private`.
    ///
    /// `nil` when the field is empty or not a valid Dictionary (RFC 8941): a cache then ignores
    /// it, as if it were absent (RFC 9213 §2.1). Keys are lowercase by that grammar, so
    /// `MaX-aGe=60` is invalid; a repeated key keeps its last value; parameters are ignored;
    /// `name=?0` leaves the directive out; a delta-seconds directive with a value that is not
    /// an Integer (`max-age="60"`, `max-age=1.5`) counts as malformed, that is zero.
    ///
    /// - Complexity: O(*n*) in the lines' length.
    public init?(targetedLines lines: [String]) {
        guard let dictionary = StructuredDictionary(lines: lines), !dictionary.members.isEmpty else { return nil }
        var directives: [Directive] = []
        for (key, value) in dictionary.members {
            switch value {
            case .boolean(true):
                directives.append(Directive(lowercasedName: key, argument: nil, isQuoted: false))
            case .boolean(false):
                continue
            case .string(let text):
                // A string where an Integer belongs keeps its quotes, so that it is not `1*DIGIT`.
                let argument = Self.secondsDirectives.contains(key) ? "\"\(text)\"" : text
                directives.append(Directive(lowercasedName: key, argument: argument, isQuoted: true))
            case .other(let text):
                directives.append(Directive(lowercasedName: key, argument: text, isQuoted: false))
            }
        }
        self.directives = directives
    }
}
