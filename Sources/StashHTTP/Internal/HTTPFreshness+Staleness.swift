import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// When a stored response that is no longer fresh may still be served (RFC 5861), and which
/// requests a response that carries `Vary` may answer.
extension HTTPFreshness {
    static let varyKey = "http.vary"
    static let varyValuesKey = "http.vary-values"
    /// The keys of the other `Vary` variants of a URL, one per line, in its base entry.
    static let variantsKey = "http.variants"

    /// The variant keys that `metadata` lists.
    static func variants(of metadata: DiskCache.Metadata) -> [String] {
        metadata.extra[variantsKey].map { $0.split(separator: "\n").map(String.init) } ?? []
    }

    /// How many seconds past its freshness `metadata` is at `now`: 0 while fresh, `nil` for an
    /// entry without a recorded freshness (stored by other means).
    static func staleness(of metadata: DiskCache.Metadata, at now: Date) -> TimeInterval? {
        guard let text = metadata.extra[freshUntilKey], let until = TimeInterval(text) else { return nil }
        return max(0, now.timeIntervalSince1970 - until)
    }

    /// Whether a stale entry may be served because the origin failed (stale-if-error).
    ///
    /// Never for `no-store` or `must-revalidate`; otherwise within the response's
    /// `stale-if-error` or the loader's `maximumStaleness`, whichever is longer.
    /// `maximumStaleness == nil` refuses every stale serve, `stale-if-error` included.
    static func mayServeStaleOnError(_ metadata: DiskCache.Metadata, at now: Date, maximumStaleness: Duration?)
        -> Bool
    {
        guard let maximumStaleness, let staleness = staleness(of: metadata, at: now) else { return false }
        let control = HTTPCacheControl(parsing: metadata.extra[cacheControlKey])
        if control.noStore || control.mustRevalidate { return false }
        let allowed = max(control.staleIfError?.timeInterval ?? 0, maximumStaleness.timeInterval)
        return staleness <= allowed
    }

    /// Whether a stale entry may be served at once while it is revalidated in the background:
    /// within the response's `stale-while-revalidate`, or else the loader's `window`; never for
    /// `no-cache`, `no-store` or `must-revalidate`, nor when `maximumStaleness` is `nil` (stale
    /// serves refused).
    static func mayServeWhileRevalidating(
        _ metadata: DiskCache.Metadata, at now: Date, window: Duration?, maximumStaleness: Duration?
    ) -> Bool {
        guard maximumStaleness != nil, let staleness = staleness(of: metadata, at: now), staleness > 0 else {
            return false
        }
        let control = HTTPCacheControl(parsing: metadata.extra[cacheControlKey])
        if control.noStore || control.noCache || control.mustRevalidate { return false }
        guard let allowed = control.staleWhileRevalidate.map(\.timeInterval) ?? window?.timeInterval else {
            return false
        }
        return staleness <= allowed
    }

    /// `metadata` with the response's `Vary` and the request's values of the headers it names.
    static func recordingVary(_ vary: String?, of request: URLRequest, in metadata: DiskCache.Metadata)
        -> DiskCache.Metadata
    {
        var metadata = metadata
        guard let vary, !vary.trimmingCharacters(in: .whitespaces).isEmpty else {
            metadata.extra[varyKey] = nil
            metadata.extra[varyValuesKey] = nil
            return metadata
        }
        metadata.extra[varyKey] = vary
        metadata.extra[varyValuesKey] = varyValues(vary, of: request)
        return metadata
    }

    /// Whether a stored response may answer `request`: it has no `Vary`, or the request sends the
    /// same values for every header it names; `Vary: *` matches nothing.
    static func matchesVary(_ metadata: DiskCache.Metadata, request: URLRequest) -> Bool {
        guard let vary = metadata.extra[varyKey] else { return true }
        guard let stored = metadata.extra[varyValuesKey], let values = varyValues(vary, of: request) else {
            return false
        }
        return stored == values
    }

    /// The request's values of the headers `vary` names, one `name: value` line each (absent
    /// headers as empty), or `nil` for `Vary: *`.
    static func varyValues(_ vary: String, of request: URLRequest) -> String? {
        let names = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if names.contains("*") { return nil }
        return names.filter { !$0.isEmpty }.sorted().map { name in
            let value = request.value(forHTTPHeaderField: name) ?? ""
            let normalized = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return name + ": " + normalized.joined(separator: ",")
        }.joined(separator: "\n")
    }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var timeInterval: TimeInterval {
        let (whole, attoseconds) = components
        return TimeInterval(whole) + TimeInterval(attoseconds) / 1e18
    }
}
