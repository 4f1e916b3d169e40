import Foundation
import Testing

@testable import StashHTTP

/// Freshness lifetime (RFC 9111 §4.2.1, §4.2.2, §5.3) and age (§4.2.3) for both kinds.
@Suite struct HTTPCachePolicyFreshnessTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static func date(_ offset: TimeInterval) -> String { HTTPDate.format(now.addingTimeInterval(offset)) }

    let shared = HTTPCachePolicy(kind: .shared)
    let own = HTTPCachePolicy(kind: .private)

    private func lifetimes(_ headers: [(String, String)], status: Int = 200) -> (own: Duration, shared: Duration) {
        let fields = HTTPFields(headers)
        return (
            own.freshnessLifetime(status: status, responseHeaders: fields, responseTime: Self.now),
            shared.freshnessLifetime(status: status, responseHeaders: fields, responseTime: Self.now)
        )
    }

    @Test func rfc9111Section5_2_2_10_sMaxAgeOverridesMaxAgeAndExpiresInASharedCacheOnly() {
        let result = lifetimes([
            ("Cache-Control", "max-age=60, s-maxage=600"), ("Expires", Self.date(6000)), ("Date", Self.date(0)),
        ])
        #expect(result.own == .seconds(60))
        #expect(result.shared == .seconds(600))
    }

    @Test func rfc9111Section4_2_1_maxAgeOverridesExpires() {
        let result = lifetimes([("Cache-Control", "max-age=60"), ("Expires", Self.date(6000)), ("Date", Self.date(0))])
        #expect(result.own == .seconds(60) && result.shared == .seconds(60))
    }

    @Test(arguments: [
        "Thu, 15 Jan 2027 09:00:00 GMT",  // IMF-fixdate
        "Thursday, 15-Jan-27 09:00:00 GMT",  // RFC 850
        "Thu Jan 15 09:00:00 2027",  // asctime
        "THU, 15 JAN 2027 09:00:00 gmt",  // wrong case
    ])
    func rfc9111Section5_3_expiresIsAcceptedInAllThreeDateFormats(expires: String) {
        // Date is 08:00:00 GMT, so Expires is one hour later.
        let result = lifetimes([("Expires", expires), ("Date", "Fri, 15 Jan 2027 08:00:00 GMT")])
        #expect(result.own == .seconds(3600) && result.shared == .seconds(3600))
    }

    @Test(arguments: ["0", "-1", "never", "Thu, 32 Jan 2027 09:00:00 GMT", ""])
    func rfc9111Section5_3_anInvalidExpiresMeansAlreadyExpired(expires: String) {
        let result = lifetimes([("Expires", expires), ("Date", Self.date(0)), ("Last-Modified", Self.date(-86400))])
        #expect(result.own == .zero && result.shared == .zero)
    }

    @Test func rfc9111Section5_3_anExpiresInThePastIsStaleAndWithoutDateCountsFromTheResponseTime() {
        #expect(lifetimes([("Expires", Self.date(-10)), ("Date", Self.date(0))]).shared == .zero)
        #expect(lifetimes([("Expires", Self.date(100))]).shared == .seconds(100))
        #expect(
            shared.freshnessLifetime(status: 200, responseHeaders: ["Expires": Self.date(100)], responseTime: nil)
                == .zero)
    }

    @Test func rfc9111Section4_2_1_severalExpiresLinesMakeTheResponseStale() {
        let result = lifetimes([("Expires", Self.date(100)), ("Expires", Self.date(9000)), ("Date", Self.date(0))])
        #expect(result.own == .zero && result.shared == .zero)
    }

    @Test(arguments: [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501])
    func rfc9111Section4_2_2_heuristicFreshnessForHeuristicallyCacheableStatuses(status: Int) {
        let result = lifetimes([("Last-Modified", Self.date(-10_000)), ("Date", Self.date(0))], status: status)
        #expect(result.own == .seconds(1000) && result.shared == .seconds(1000))
    }

    @Test(arguments: [201, 202, 302, 403, 502, 503, 504, 599])
    func rfc9111Section4_2_2_noHeuristicFreshnessForOtherStatuses(status: Int) {
        let result = lifetimes([("Last-Modified", Self.date(-10_000)), ("Date", Self.date(0))], status: status)
        #expect(result.own == .zero && result.shared == .zero)
        let withPublic = lifetimes(
            [("Last-Modified", Self.date(-10_000)), ("Date", Self.date(0)), ("Cache-Control", "public")],
            status: status)
        #expect(withPublic.shared == .seconds(1000))
    }

    @Test func rfc9111Section4_2_2_heuristicFreshnessIsCappedAndConfigurable() {
        #expect(lifetimes([("Last-Modified", Self.date(-100 * 86400)), ("Date", Self.date(0))]).own == .seconds(86400))
        let tuned = HTTPCachePolicy(kind: .shared, heuristicFraction: 0.5, maxHeuristicFreshness: .seconds(100))
        let fields: HTTPFields = ["Last-Modified": Self.date(-60), "Date": Self.date(0)]
        #expect(tuned.freshnessLifetime(status: 200, responseHeaders: fields) == .seconds(30))
        #expect(lifetimes([]).shared == .zero)
    }

    @Test func rfc9111Section4_2_3_currentAgeCountsAgeApparentAgeDelayAndResidentTime() {
        let requestTime = Self.now
        let responseTime = Self.now.addingTimeInterval(2)
        let later = responseTime.addingTimeInterval(10)
        // Age 100 plus a 2 s response delay beats the apparent age of 50.
        let aged: HTTPFields = ["Age": "100", "Date": Self.date(-48)]
        #expect(
            shared.currentAge(responseHeaders: aged, requestTime: requestTime, responseTime: responseTime, now: later)
                == .seconds(112))
        // A Date 500 s before the response beats Age.
        let old: HTTPFields = ["Age": "100", "Date": Self.date(-498)]
        #expect(
            own.currentAge(responseHeaders: old, requestTime: requestTime, responseTime: responseTime, now: later)
                == .seconds(510))
    }

    @Test(arguments: ["abc", "-7200", "7200.0", "7200;foo=bar", ", 7200", ""])
    func rfc9111Section5_1_anInvalidAgeIsIgnored(age: String) {
        let fields: HTTPFields = ["Age": age, "Date": Self.date(0)]
        #expect(
            shared.currentAge(responseHeaders: fields, requestTime: Self.now, responseTime: Self.now, now: Self.now)
                == .zero)
    }

    @Test func rfc9111Section5_1_anAgeTooLargeIsTwoToTheThirtyFirstSeconds() {
        let fields: HTTPFields = ["Age": "999999999999999999999"]
        let age = own.currentAge(responseHeaders: fields, requestTime: Self.now, responseTime: Self.now, now: Self.now)
        #expect(age == .seconds(2_147_483_648))
        #expect(HTTPCachePolicy.ageHeaderValue(age) == "2147483648")
        #expect(HTTPCachePolicy.ageHeaderValue(.milliseconds(1999)) == "1")
    }
}
