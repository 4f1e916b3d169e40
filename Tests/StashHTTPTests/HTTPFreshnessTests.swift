import Foundation
import Stash
import Testing

@testable import StashHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Parsing of caching headers and the freshness rules of RFC 9111, without a server.
@Suite struct HTTPFreshnessTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)  // Fri, 15 Jan 2027 08:00:00 GMT

    @Test(arguments: ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"])
    func parsesAllThreeHTTPDateFormats(text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test(arguments: ["", "0", "-1", "yesterday", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT"])
    func rejectsInvalidDates(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func parsesCacheControlDirectives() {
        let control = HTTPCacheControl(parsing: "public, Max-Age=3600, must-revalidate")
        #expect(control.isPublic && control.mustRevalidate && control.maxAge == .seconds(3600))
        #expect(HTTPCacheControl(parsing: "no-store").noStore)
        #expect(HTTPCacheControl(parsing: "no-cache, max-age=\"60\"").noCache)
        #expect(HTTPCacheControl(parsing: "max-age=\"60\"").maxAge == .seconds(60))
        #expect(HTTPCacheControl(parsing: "max-age=soon").maxAge == .zero)
    }

    @Test func parsesStaleIfErrorAndStaleWhileRevalidate() {
        let control = HTTPCacheControl(parsing: "max-age=60, stale-while-revalidate=30, Stale-If-Error=\"86400\"")
        #expect(control.maxAge == .seconds(60))
        #expect(control.staleWhileRevalidate == .seconds(30))
        #expect(control.staleIfError == .seconds(86_400))
        #expect(HTTPCacheControl(parsing: "stale-if-error=soon").staleIfError == nil)
        #expect(HTTPCacheControl(parsing: "stale-if-error").staleIfError == nil)
    }

    private func headers(_ fields: [String: String]) -> HTTPFreshness.Headers {
        let response = HTTPURLResponse(
            url: URL(string: "https://example.com/a")!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)!
        return HTTPFreshness.Headers(response)
    }

    @Test func maxAgeCountsFromTheResponseAndSubtractsItsAge() {
        let fresh = HTTPFreshness.freshUntil(headers(["Cache-Control": "max-age=600", "Age": "100"]), receivedAt: now)
        #expect(fresh == now.addingTimeInterval(500))
        let overrides = HTTPFreshness.freshUntil(
            headers(["Cache-Control": "max-age=60", "Expires": "Fri, 15 Jan 2027 09:00:00 GMT"]), receivedAt: now)
        #expect(overrides == now.addingTimeInterval(60))
    }

    @Test func expiresCountsFromTheDateHeader() {
        // The server's clock is 10 minutes behind ours: the lifetime (30 minutes) still holds.
        let fresh = HTTPFreshness.freshUntil(
            headers(["Expires": "Fri, 15 Jan 2027 08:20:00 GMT", "Date": "Fri, 15 Jan 2027 07:50:00 GMT"]),
            receivedAt: now)
        #expect(fresh == now.addingTimeInterval(30 * 60 - 10 * 60))
        #expect(HTTPFreshness.freshUntil(headers(["Expires": "0"]), receivedAt: now) == now)
    }

    @Test func lastModifiedGivesATenthOfItsAgeCappedAtADay() {
        let recent = HTTPFreshness.freshUntil(
            headers(["Last-Modified": "Fri, 15 Jan 2027 07:00:00 GMT"]), receivedAt: now)
        #expect(recent == now.addingTimeInterval(360))
        let old = HTTPFreshness.freshUntil(headers(["Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"]), receivedAt: now)
        #expect(old == now.addingTimeInterval(86_400))
    }

    @Test func noCacheOrNoInformationMeansStaleAtOnce() {
        #expect(HTTPFreshness.freshUntil(headers(["Cache-Control": "no-cache, max-age=600"]), receivedAt: now) == now)
        #expect(HTTPFreshness.freshUntil(headers([:]), receivedAt: now) == now)
    }

    /// A response without freshness is not fresh before its recorded response time either.
    ///
    /// The response time is recorded to the millisecond, rounded: a clock read just after the
    /// response arrived can be before it. Its resident time is then zero (RFC 9111 §4.2.3), not
    /// negative.
    @Test func aResponseIsNotFreshBeforeItsRecordedResponseTime() {
        let arrived = now.addingTimeInterval(0.0006)
        let stale = HTTPFreshness.metadata(for: headers([:]), url: nil, receivedAt: arrived)
        #expect(stale.extra[HTTPFreshness.storedAtKey] == "1800000000.001")
        #expect(!HTTPFreshness.isFresh(stale, at: arrived))
        #expect(!HTTPFreshness.isFresh(stale, at: now))
        let fresh = HTTPFreshness.metadata(
            for: headers(["Cache-Control": "max-age=1"]), url: nil, receivedAt: arrived)
        #expect(HTTPFreshness.isFresh(fresh, at: now))
        #expect(HTTPFreshness.isFresh(fresh, at: arrived.addingTimeInterval(0.999)))
        #expect(!HTTPFreshness.isFresh(fresh, at: arrived.addingTimeInterval(1.001)))
    }

    @Test func a304UpdatesTheStoredMetadataAndKeepsWhatItDoesNotName() {
        let stored = HTTPFreshness.metadata(
            for: headers(["Content-Type": "image/png", "ETag": "\"1\"", "Cache-Control": "max-age=60"]), url: nil,
            receivedAt: now)
        #expect(HTTPFreshness.isFresh(stored, at: now.addingTimeInterval(59)))
        #expect(!HTTPFreshness.isFresh(stored, at: now.addingTimeInterval(60)))
        let later = now.addingTimeInterval(3600)
        let refreshed = HTTPFreshness.metadata(
            for: headers(["ETag": "\"1\"", "Cache-Control": "max-age=120"]), url: nil, receivedAt: later,
            updating: stored)
        #expect(refreshed.contentType == "image/png")
        #expect(refreshed.etag == "\"1\"")
        #expect(refreshed.extra[HTTPFreshness.cacheControlKey] == "max-age=120")
        #expect(HTTPFreshness.isFresh(refreshed, at: later.addingTimeInterval(119)))
        #expect(!HTTPFreshness.isFresh(DiskCache.Metadata(), at: now))
    }

    @Test func headersAreReadWhateverTheirSpelling() {
        let response = HTTPURLResponse(
            url: URL(string: "https://example.com/a")!, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["etag": "\"x\"", "last-modified": "Sun, 06 Nov 1994 08:49:37 GMT"])!
        let headers = HTTPFreshness.Headers(response)
        #expect(headers.etag == "\"x\"")
        #expect(headers.lastModified == "Sun, 06 Nov 1994 08:49:37 GMT")
    }
}
