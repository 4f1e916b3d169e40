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
    /// `stale-if-error=N` (RFC 5861): the response may be served this many seconds past its
    /// freshness when the origin fails.
    var staleIfError: Int?
    /// `stale-while-revalidate=N` (RFC 5861): the response may be served this many seconds past
    /// its freshness while it is revalidated in the background.
    var staleWhileRevalidate: Int?

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
                maxAge = Self.seconds(directive) ?? 0
            case "stale-if-error": staleIfError = Self.seconds(directive)
            case "stale-while-revalidate": staleWhileRevalidate = Self.seconds(directive)
            case "no-store": noStore = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            default: continue
            }
        }
    }

    /// The non-negative number of seconds of a `name=N` directive, or `nil` when malformed.
    private static func seconds(_ directive: [String]) -> Int? {
        guard directive.count > 1 else { return nil }
        return Int(directive[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))).map { max(0, $0) }
    }
}
