import Foundation
import Testing

@testable import StashHTTP

/// How the policy reads `Age` (RFC 9111 §5.1) and `Expires` (RFC 9111 §5.3, RFC 9110 §5.6.7)
/// when a sender gets them wrong: the cases of the http-tests/cache-tests conformance suite that
/// a shared cache must get right, checked through the reuse decision a proxy makes.
@Suite struct HTTPCachePolicyFieldParsingTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)  // Fri, 15 Jan 2027 08:00:00 GMT
    let shared = HTTPCachePolicy(kind: .shared)

    /// The decision for a response received at `now` with `headers`, asked 3 seconds later.
    private func decision(_ headers: [(String, String)], policy: HTTPCachePolicy? = nil) -> HTTPCacheReuse {
        let stored = StoredResponse(
            status: 200, headers: HTTPFields(headers), requestTime: Self.now, responseTime: Self.now)
        return (policy ?? shared).reuse(
            method: "GET", requestHeaders: HTTPFields(), stored: stored, now: Self.now.addingTimeInterval(3))
    }

    private func isFresh(_ decision: HTTPCacheReuse) -> Bool {
        if case .fresh = decision { return true }
        return false
    }

    // MARK: Age (§5.1)

    /// A list-valued `Age` counts by its first member: an old first member makes a response
    /// with `max-age=3600` stale, a `0` first member leaves it fresh.
    @Test(arguments: [
        (["7200, 0"], 7200), (["7200", "0"], 7200), (["0, 7200"], 0), (["0", "7200"], 0),
        (["0, 0"], 0), (["0", "0"], 0), (["3600", "3600"], 3600), (["1800 , 7200"], 1800),
    ])
    func rfc9111Section5_1_aListValuedAgeUsesItsFirstMember(lines: [String], seconds: Int) {
        let headers =
            [("Date", HTTPDate.format(Self.now)), ("Cache-Control", "max-age=3600")] + lines.map { ("Age", $0) }
        let age = shared.currentAge(
            responseHeaders: HTTPFields(headers), requestTime: Self.now, responseTime: Self.now, now: Self.now)
        #expect(age == .seconds(seconds))
        #expect(isFresh(decision(headers)) == (seconds < 3600))
    }

    /// `Age` values that are not a non-negative integer are ignored (the response is as old as
    /// its `Date` says), as §5.1 asks.
    @Test(arguments: ["abc", "-7200", "7200.0"])
    func rfc9111Section5_1_anAgeThatIsNotANonNegativeIntegerIsIgnored(age: String) {
        let headers = [("Date", HTTPDate.format(Self.now)), ("Cache-Control", "max-age=3600"), ("Age", age)]
        #expect(decision(headers) == .fresh(age: .seconds(3)))
    }

    /// An `Age` at or past 2³¹ − 1 seconds makes a response stale, however large (§1.2.2).
    @Test(arguments: ["2147483647", "2147483648", "2147483649", "99999999999999999999999"])
    func rfc9111Section5_1_aVeryLargeAgeSaturatesAndIsStale(age: String) {
        let headers = [("Date", HTTPDate.format(Self.now)), ("Cache-Control", "max-age=3600"), ("Age", age)]
        #expect(decision(headers) == .revalidate(validators: HTTPFields()))
    }

    // MARK: Expires (§5.3, RFC 9110 §5.6.7)

    /// The three HTTP-date formats, names in any case, give `Expires` minus `Date`.
    @Test(arguments: [
        ("Thu, 18 Aug 2050 02:01:18 GMT", "IMF-fixdate"),
        ("Thursday, 18-Aug-50 02:01:18 GMT", "obsolete RFC 850"),
        ("Thu Aug 18 02:01:18 2050", "asctime"),
        ("Thu Aug  8 02:01:18 2050", "asctime, one-digit day"),
        ("THU, 18 Aug 2050 02:01:18 GMT", "upper-case day name"),
        ("Thu, 18 AUG 2050 02:01:18 GMT", "upper-case month"),
        ("Thu, 18 Aug 2050 02:01:18 gMT", "mixed-case zone"),
        ("Tue, 19 Jan 2038 14:14:08 GMT", "just past 32 bits"),
        ("Sun, 21 Nov 2286 04:46:39 GMT", "far future"),
    ])
    func rfc9111Section5_3_anExpiresInAnHTTPDateFormatIsFresh(expires: String, form: String) {
        let headers = [("Expires", expires), ("Date", HTTPDate.format(Self.now))]
        let expiry = HTTPDate.parseStrict(expires)
        #expect(expiry != nil, "\(form)")
        let lifetime = shared.freshnessLifetime(status: 200, responseHeaders: HTTPFields(headers))
        #expect(lifetime == HTTPCachePolicy.duration(expiry?.timeIntervalSince(Self.now) ?? 0), "\(form)")
        #expect(isFresh(decision(headers)), "\(form)")
    }

    /// The exact instants of each format, with the RFC 9110 example date.
    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func rfc9110Section5_6_7_theStrictParserReadsTheThreeFormats(text: String) {
        #expect(HTTPDate.parseStrict(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    /// Anything that is not exactly an HTTP-date makes `Expires` invalid: the response is
    /// already expired and must be revalidated, even though the lenient `Date` parser would read
    /// most of these.
    @Test(arguments: [
        ("Thu, 18 Aug 2050 02:01:18 UTC", "UTC"),
        ("Thu, 18 Aug 2050 02:01:18 AEST", "other zone"),
        ("Thu, 18 Aug 50 02:01:18 GMT", "two-digit year"),
        ("Thu 18 Aug 2050 02:01:18 GMT", "missing comma"),
        ("Thu, 18  Aug  2050 02:01:18 GMT", "multiple spaces"),
        ("Thu, 18-Aug-2050 02:01:18 GMT", "date dashes"),
        ("Thu, 18 Aug 2050 02.01.18 GMT", "time periods"),
        ("Thu, 18 Aug 2050 2:01:18 GMT", "one-digit hour"),
        ("Thu, 31 Feb 2050 02:01:18 GMT", "impossible date"),
        ("Thu, 18 Aug 2050 24:00:00 GMT", "hour 24"),
        ("Thx, 18 Aug 2050 02:01:18 GMT", "unknown day name"),
        ("Thursday, 18-Aug-2050 02:01:18 GMT", "RFC 850 with four-digit year"),
        ("Thu Aug 8 02:01:18 2050", "asctime with one space before a one-digit day"),
        ("0", "zero"),
    ])
    func rfc9111Section5_3_anExpiresThatIsNotExactlyAnHTTPDateIsAlreadyExpired(expires: String, form: String) {
        let headers = [("Expires", expires), ("Date", HTTPDate.format(Self.now))]
        #expect(HTTPDate.parseStrict(expires) == nil, "\(form)")
        #expect(shared.freshnessLifetime(status: 200, responseHeaders: HTTPFields(headers)) == .zero, "\(form)")
        #expect(decision(headers) == .revalidate(validators: HTTPFields()), "\(form)")
    }

    /// Two `Expires` lines make the response stale, whichever is valid (§4.2.1, §5.3).
    @Test func rfc9111Section5_3_severalExpiresLinesAreInvalid() {
        let headers = [
            ("Expires", "Thu, 18 Aug 2050 02:01:18 GMT"), ("Expires", "Thu, 18 Aug 2050 02:01:19 GMT"),
            ("Date", HTTPDate.format(Self.now)),
        ]
        #expect(decision(headers) == .revalidate(validators: HTTPFields()))
        #expect(decision(Array(headers.dropFirst())) == .fresh(age: .seconds(3)))
    }

    /// `Date` and `Last-Modified` stay tolerant: a `Last-Modified` in `UTC` still gives
    /// heuristic freshness (§4.2.2), where a strict reading would only lose it.
    @Test func rfc9111Section4_2_2_lastModifiedIsReadTolerantly() {
        let headers: HTTPFields = ["Date": HTTPDate.format(Self.now), "Last-Modified": "Fri, 15 Jan 2027 06:00:00 UTC"]
        #expect(shared.freshnessLifetime(status: 200, responseHeaders: headers) == .seconds(720))
    }
}
