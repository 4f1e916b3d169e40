import Foundation
import Testing

@testable import StashHTTP

/// Targeted cache control (RFC 9213) for a CDN's policy that names `CDN-Cache-Control`.
///
/// A valid targeted field replaces `Cache-Control` and `Expires` for storing and freshness
/// (§2.2); an invalid one is ignored (§2.1). The cases of the http-tests/cache-tests
/// `cdn-cache-control` group.
@Suite struct HTTPCachePolicyTargetedTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(now.addingTimeInterval(offset)) }

    let cdn = HTTPCachePolicy(kind: .shared, targetedFields: ["CDN-Cache-Control"])
    let plain = HTTPCachePolicy(kind: .shared)

    /// What a cache does with a `200` to a plain `GET` carrying `headers` when asked again
    /// `after` seconds later: `nil` when it does not store it, else the reuse decision.
    private func outcome(_ policy: HTTPCachePolicy, _ headers: [(String, String)], after: TimeInterval = 3)
        -> HTTPCacheReuse?
    {
        guard
            let stored = policy.storableHeaders(
                method: "GET", requestHeaders: HTTPFields(), status: 200, responseHeaders: HTTPFields(headers))
        else { return nil }
        let response = StoredResponse(status: 200, headers: stored, requestTime: Self.now, responseTime: Self.now)
        return policy.reuse(
            method: "GET", requestHeaders: HTTPFields(), stored: response, now: Self.now.addingTimeInterval(after))
    }

    private func isFresh(_ outcome: HTTPCacheReuse?) -> Bool {
        if case .fresh = outcome { return true }
        return false
    }

    @Test func rfc9213Section2_2_privateInTheTargetedFieldForbidsStoringDespiteCacheControlMaxAge() {
        let headers = [
            ("CDN-Cache-Control", "private"), ("Cache-Control", "max-age=10000"), ("Expires", Self.date(10000)),
            ("Date", Self.date(0)),
        ]
        #expect(outcome(cdn, headers) == nil)
        #expect(isFresh(outcome(plain, headers)))
    }

    @Test func rfc9213Section2_2_noCacheInTheTargetedFieldRevalidatesDespiteCacheControlMaxAge() {
        let headers = [
            ("CDN-Cache-Control", "no-cache"), ("Cache-Control", "max-age=10000"), ("Expires", Self.date(10000)),
            ("Date", Self.date(0)), ("ETag", "\"v1\""),
        ]
        #expect(outcome(cdn, headers) == .revalidate(validators: ["If-None-Match": "\"v1\""]))
        #expect(isFresh(outcome(plain, headers)))
    }

    @Test func rfc9213Section2_2_noStoreInTheTargetedFieldForbidsStoringDespiteCacheControlMaxAge() {
        let headers = [
            ("Cache-Control", "max-age=10000"), ("CDN-Cache-Control", "no-store"), ("Expires", Self.date(10000)),
            ("Date", Self.date(0)),
        ]
        #expect(outcome(cdn, headers) == nil)
    }

    @Test func rfc9213Section2_2_aFreshTargetedMaxAgeIsStoredAndServedDespiteCacheControlNoStore() {
        let headers = [("Cache-Control", "no-store"), ("CDN-Cache-Control", "max-age=10000")]
        #expect(outcome(cdn, headers) == .fresh(age: .seconds(3)))
        #expect(outcome(plain, headers) == nil)
        let stored = StoredResponse(
            status: 200, headers: HTTPFields(headers), requestTime: Self.now, responseTime: Self.now)
        #expect(cdn.freshnessLifetime(of: stored) == .seconds(10000))
        #expect(cdn.mayServeStale(stored))
    }

    /// The targeted `max-age` sets the lifetime whether it is longer or shorter than
    /// `Cache-Control`'s, and `Expires` (past, future or invalid) is ignored beside it.
    @Test(arguments: [
        ([("CDN-Cache-Control", "max-age=3600")], 3600),
        ([("CDN-Cache-Control", "max-age=2147483648")], 2_147_483_648),
        ([("CDN-Cache-Control", "max-age=99999999999")], 2_147_483_648),
        ([("CDN-Cache-Control", "foobar, max-age=3600")], 3600),
        ([("CDN-Cache-Control", "max-age=3600"), ("Expires", date(-10000)), ("Date", date(0))], 3600),
        ([("CDN-Cache-Control", "max-age=3600"), ("Expires", "0"), ("Date", date(0))], 3600),
        ([("CDN-Cache-Control", "max-age=0"), ("Expires", date(10000)), ("Date", date(0))], 0),
        ([("CDN-Cache-Control", "max-age=0")], 0),
        ([("Cache-Control", "max-age=1"), ("CDN-Cache-Control", "max-age=3600")], 3600),
        ([("Cache-Control", "max-age=3600"), ("CDN-Cache-Control", "max-age=1")], 1),
        ([("CDN-Cache-Control", "max-age=3600;foo=bar, s-maxage=60")], 60),
        ([("CDN-Cache-Control", "max-age=60"), ("CDN-Cache-Control", "max-age=120")], 120),
    ])
    func rfc9213Section2_2_theTargetedMaxAgeSetsTheFreshnessLifetime(headers: [(String, String)], seconds: Int) {
        let fields = HTTPFields(headers)
        #expect(
            cdn.freshnessLifetime(status: 200, responseHeaders: fields, responseTime: Self.now) == .seconds(seconds))
        #expect(isFresh(outcome(cdn, headers)) == (seconds > 3))
    }

    @Test func rfc9213Section2_2_anAgeBeyondTheTargetedMaxAgeIsStale() {
        let headers = [("Date", Self.date(0)), ("CDN-Cache-Control", "max-age=3600"), ("Age", "7200")]
        #expect(outcome(cdn, headers) == .revalidate(validators: HTTPFields()))
    }

    /// A targeted field that is not a valid Structured Field Dictionary is ignored (§2.1).
    ///
    /// `Cache-Control` then applies, as for an empty one. A String where max-age needs an
    /// Integer is malformed: no freshness.
    @Test(arguments: [
        ("max-age=10000, &&&&&", "no-store", false),  // unknown item type
        ("max-age =100", "max-age=1", false),  // space before "="
        ("max-age= 100", "max-age=1", false),  // space after "="
        ("MaX-aGe=3600", "max-age=1", false),  // keys are lowercase
        ("max-age=10000,", "no-store", false),  // trailing comma
        ("max-age=1234567890123456", "no-store", false),  // more than 15 digits
        ("max-age=\"10000\"", "no-store", false),  // wrong type: stale, and not no-store
        ("", "max-age=10000", true),  // empty: Cache-Control applies
        ("max-age=(1 2)", "max-age=10000", false),  // an inner list: malformed max-age
    ])
    func rfc9213Section2_1_anInvalidTargetedFieldIsIgnored(targeted: String, cacheControl: String, fresh: Bool) {
        let headers = [("CDN-Cache-Control", targeted), ("Cache-Control", cacheControl)]
        #expect(isFresh(outcome(cdn, headers, after: 3)) == fresh)
        if targeted == "max-age=\"10000\"" || targeted.hasPrefix("max-age=(") {
            #expect(HTTPCacheControl(targetedLines: [targeted])?.maxAge == .zero)
        } else if !targeted.isEmpty {
            #expect(HTTPCacheControl(targetedLines: [targeted]) == nil)
        }
    }

    @Test func rfc9213Section2_2_theFirstValidTargetedFieldInPriorityOrderWins() {
        let policy = HTTPCachePolicy(kind: .shared, targetedFields: ["Acme-Cache-Control", "CDN-Cache-Control"])
        let both = [("Acme-Cache-Control", "max-age=60"), ("CDN-Cache-Control", "no-store")]
        #expect(outcome(policy, both) == .fresh(age: .seconds(3)))
        let invalidFirst = [("Acme-Cache-Control", "Max-Age=60"), ("CDN-Cache-Control", "max-age=30")]
        #expect(policy.freshnessLifetime(status: 200, responseHeaders: HTTPFields(invalidFirst)) == .seconds(30))
    }

    @Test func rfc9213Section2_1_targetedDirectivesParseAsAStructuredDictionary() {
        let control = HTTPCacheControl(targetedLines: ["max-age=60, no-store=?0, private=\"Set-Cookie\", public"])
        #expect(control?.maxAge == .seconds(60))
        #expect(control?.noStore == false)
        #expect(control?.privateFields == ["set-cookie"])
        #expect(control?.isPublic == true)
        #expect(HTTPCacheControl(targetedLines: ["  "]) == nil)
    }
}
