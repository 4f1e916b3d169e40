/// Whether a stored response may answer a request, per RFC 9111 §4: the decision of
/// ``HTTPCachePolicy/reuse(method:requestHeaders:stored:now:)``.
public enum HTTPCacheReuse: Sendable, Hashable {
    /// Fresh and acceptable to the request: serve it, with `Age` set to `age` (§4.2, §5.1).
    case fresh(age: Duration)
    /// Stale, but the request's `max-stale` accepts it and the response does not forbid it
    /// (§4.2.4, §5.2.1.2): serve it, with `Age` set to `age`.
    case stale(age: Duration)
    /// Must not be served without a successful validation (§4.3): send the request with
    /// `validators` added (`If-None-Match` from `ETag`, `If-Modified-Since` from
    /// `Last-Modified`; empty when the response has none, then the request is sent as it is).
    /// A `304` refreshes the stored response (``HTTPCachePolicy/headersAfterNotModified(stored:notModified:)``);
    /// a full response replaces it.
    case revalidate(validators: HTTPFields)
    /// Cannot answer this request at all: another method, or a `Vary` mismatch (§4, §4.1).
    /// Forward the request; the stored response stays for the requests it matches.
    case unusable
    /// The request says `only-if-cached` (§5.2.1.7) and the stored response cannot answer it
    /// without the origin: answer `504 Gateway Timeout`.
    case onlyIfCachedMiss
}
