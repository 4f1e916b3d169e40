/// Whom a cache answers, which decides the RFC 9111 rules it follows.
public enum HTTPCacheKind: Sendable, Hashable {
    /// A cache for one user, such as an app's: it may store `private` responses and responses to
    /// requests with `Authorization`.
    case `private`
    /// A cache that answers many users, such as a server's, a reverse proxy's, or a tier that a
    /// fleet shares: it never stores `private` responses (RFC 9111 §5.2.2.7), stores responses to
    /// requests with `Authorization` only when the response allows it (§3.5), prefers
    /// `s-maxage` (§5.2.2.10) and honours `proxy-revalidate` (§5.2.2.8).
    case shared
}
