import Foundation

/// The directives of a `Cache-Control` header that a private cache acts on (RFC 9111 §5.2).
struct CacheControl: Hashable, Sendable {
    /// `max-age=N`, in seconds.
    var maxAge: Int?
    /// `no-store`: the response must not be stored.
    var noStore = false
    /// `no-cache`: a stored response must be revalidated before every use.
    var noCache = false
    /// `must-revalidate`: a stale response must not be served without revalidation.
    var mustRevalidate = false

    /// Parses a header value such as `public, max-age=3600, must-revalidate`.
    ///
    /// Unknown directives are ignored; a malformed `max-age` counts as `0` (stale), as RFC 9111
    /// asks of a cache that cannot parse it.
    init(parsing header: String?) {
        guard let header else { return }
        for part in header.split(separator: ",") {
            let directive = part.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let name = directive.first?.lowercased() else { continue }
            switch name {
            case "max-age":
                let value =
                    directive.count > 1 ? directive[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
                maxAge = Int(value).map { max(0, $0) } ?? 0
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            default: continue
            }
        }
    }
}
