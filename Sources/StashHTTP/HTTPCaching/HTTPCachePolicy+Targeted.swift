extension HTTPCachePolicy {
    // MARK: - Targeted cache control (RFC 9213)

    /// The response directives this cache obeys, and whether they come from a targeted field.
    struct ResponseDirectives {
        /// The directives of the first valid targeted field, or else of `Cache-Control`.
        var control: HTTPCacheControl
        /// Whether `control` comes from a targeted field: then `Cache-Control` and `Expires`
        /// are ignored (RFC 9213 §2.2).
        var isTargeted: Bool
    }

    /// The directives that govern storing and freshness of a response with `headers`: those of
    /// the first of ``targetedFields`` that is present and valid (RFC 9213 §2.2), else
    /// `Cache-Control`'s.
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    func responseDirectives(_ headers: HTTPFields) -> ResponseDirectives {
        for name in targetedFields {
            let lines = headers.values(for: name)
            guard !lines.isEmpty, let control = HTTPCacheControl(targetedLines: lines) else { continue }
            return ResponseDirectives(control: control, isTargeted: true)
        }
        return ResponseDirectives(control: HTTPCacheControl(headers), isTargeted: false)
    }

    /// The directives of a response that govern this cache, from the first valid field of
    /// ``targetedFields`` (RFC 9213 §2.2), or from `Cache-Control` when none is present and valid.
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public func responseControl(_ headers: HTTPFields) -> HTTPCacheControl {
        responseDirectives(headers).control
    }
}
