import Foundation
import Testing

@testable import StashHTTP

/// The `Cache-Control` grammar (RFC 9111 §5.2, RFC 9110 §5.6) and the handling of duplicate and
/// malformed directives that RFC 9111 §4.2.1 and §1.2.2 recommend.
@Suite struct HTTPCacheControlTests {
    @Test func rfc9111Section5_2_namesCompareWithoutCaseAndArgumentsMayBeQuoted() {
        let control = HTTPCacheControl(parsing: "Public, MAX-AGE=\"3600\", No-StOrE")
        #expect(control.isPublic)
        #expect(control.maxAge == .seconds(3600))
        #expect(control.noStore)
    }

    @Test func rfc9111Section5_2_aQuotedStringMayContainCommasAndDirectiveNames() {
        let control = HTTPCacheControl(parsing: #"extension="max-age=3600, no-store", max-age=1"#)
        #expect(control.maxAge == .seconds(1))
        #expect(!control.noStore)
        #expect(control.first("extension")?.argument == "max-age=3600, no-store")
        #expect(HTTPCacheControl(parsing: #"max-age=1, ext="a\"b,c""#).first("ext")?.argument == #"a"b,c"#)
    }

    @Test func rfc9111Section5_2_directivesOfSeveralLinesCombine() {
        let fields = HTTPFields([("Cache-Control", "no-cache=\"a\""), ("A", "1"), ("cache-control", "max-age=3600")])
        let control = HTTPCacheControl(fields)
        #expect(control.maxAge == .seconds(3600))
        #expect(control.noCacheFields == ["a"])
        #expect(!control.noCache)
    }

    @Test func rfc9111Section4_2_1_theFirstOfDuplicateDirectivesCounts() {
        #expect(HTTPCacheControl(parsing: "max-age=1800, max-age=1").maxAge == .seconds(1800))
        #expect(HTTPCacheControl(parsing: "max-age=1, max-age=1800").maxAge == .seconds(1))
        let lines = HTTPFields([("Cache-Control", "max-age=1"), ("Cache-Control", "max-age=1800")])
        #expect(HTTPCacheControl(lines).maxAge == .seconds(1))
    }

    @Test(arguments: ["max-age='3600'", "max-age=a3600", "max-age=3600a", "max-age=3600.5", "max-age= 3600", "max-age"])
    func rfc9111Section4_2_1_aMalformedFreshnessArgumentMeansStale(value: String) {
        #expect(HTTPCacheControl(parsing: value).maxAge == .zero)
    }

    @Test func rfc9111Section5_2_aNameFollowedByWhitespaceBeforeTheEqualsSignIsNotADirective() {
        #expect(HTTPCacheControl(parsing: "max-age =3600").maxAge == nil)
        #expect(HTTPCacheControl(parsing: "max age=3600, public").isPublic)
    }

    @Test func rfc9111Section1_2_2_leadingZerosAreAcceptedAndHugeNumbersAreTwoToTheThirtyFirst() {
        #expect(HTTPCacheControl(parsing: "max-age=003600").maxAge == .seconds(3600))
        #expect(HTTPCacheControl(parsing: "max-age=99999999999999999999999").maxAge == .seconds(2_147_483_648))
    }

    @Test func rfc9111Section5_2_2_qualifiedNoCacheAndPrivateListFieldNames() {
        let control = HTTPCacheControl(parsing: #"no-cache="Set-Cookie, X-A", private="x-b""#)
        #expect(control.noCacheFields == ["set-cookie", "x-a"])
        #expect(!control.noCache)
        #expect(control.privateFields == ["x-b"])
        #expect(!control.isPrivate)
        let unqualified = HTTPCacheControl(parsing: #"private="x-b", private"#)
        #expect(unqualified.isPrivate)
        #expect(unqualified.privateFields.isEmpty)
    }

    @Test func rfc9111Section5_2_2_responseDirectives() {
        let control = HTTPCacheControl(
            parsing: "s-maxage=60, proxy-revalidate, must-understand, immutable, no-transform, "
                + "stale-if-error=300, stale-while-revalidate=30")
        #expect(control.sharedMaxAge == .seconds(60))
        #expect(control.proxyRevalidate && control.mustUnderstand && control.isImmutable && control.noTransform)
        #expect(control.staleIfError == .seconds(300))
        #expect(control.staleWhileRevalidate == .seconds(30))
        #expect(HTTPCacheControl(parsing: "stale-if-error=soon").staleIfError == nil)
    }

    @Test func rfc9111Section5_2_1_requestDirectives() {
        let control = HTTPCacheControl(parsing: "max-stale, min-fresh=20, only-if-cached, no-cache")
        #expect(control.maxStale == .some(nil))
        #expect(control.minFresh == .seconds(20))
        #expect(control.onlyIfCached && control.noCache)
        #expect(HTTPCacheControl(parsing: "max-stale=30").maxStale == .some(.seconds(30)))
        #expect(HTTPCacheControl(parsing: "max-stale=x").maxStale == .some(.zero))
        #expect(HTTPCacheControl(parsing: "").maxStale == nil)
    }

    @Test func rfc9111Section5_2_emptyMembersAndGarbageAreIgnored() {
        let control = HTTPCacheControl(parsing: " , ,public,, =x, \"q\", max-age=5 ,")
        #expect(control.isPublic)
        #expect(control.maxAge == .seconds(5))
        #expect(control.directives.map(\.name) == ["public", "max-age"])
    }
}

/// Header fields: order, case-insensitive names, repeated lines (RFC 9110 §5).
@Suite struct HTTPFieldsTests {
    @Test func rfc9110Section5_3_repeatedLinesJoinWithCommasAndNamesIgnoreCase() {
        var fields: HTTPFields = ["Vary": "Accept", "X": "1"]
        fields.add("Accept-Encoding", for: "vary")
        #expect(fields["VARY"] == "Accept, Accept-Encoding")
        #expect(fields.values(for: "vary") == ["Accept", "Accept-Encoding"])
        fields.set("*", for: "Vary")
        #expect(fields.map(\.name) == ["Vary", "X"])
        #expect(fields["vary"] == "*")
        fields["x"] = nil
        #expect(fields.count == 1 && !fields.contains("X"))
    }
}
