import Foundation
import Testing

@testable import StashHTTP

/// Updating stored headers from a 304 (RFC 9111 §3.2, §4.3.4) and invalidation after unsafe
/// methods (§4.4), for both kinds.
@Suite struct HTTPCachePolicyUpdateTests {
    @Test(arguments: [HTTPCacheKind.private, .shared])
    func rfc9111Section4_3_4_a304ReplacesTheFieldsItCarriesAndKeepsTheOthers(kind: HTTPCacheKind) {
        let stored = HTTPFields([
            ("Cache-Control", "max-age=1"), ("ETag", "\"e\""), ("Test-Header", "A"), ("Content-Type", "text/plain"),
            ("Set-Cookie", "a=b"), ("Set-Cookie", "c=d"), ("Content-Length", "10"), ("Kept", "yes"),
        ])
        let notModified = HTTPFields([
            ("cache-control", "max-age=3600"), ("ETag", "\"e\""), ("Test-Header", "B"),
            ("Content-Type", "text/plain;charset=utf-8"), ("Set-Cookie", "a=c"), ("Content-Length", "0"),
            ("Connection", "X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
        ])
        let updated = HTTPCachePolicy(kind: kind).headersAfterNotModified(stored: stored, notModified: notModified)
        #expect(updated["Cache-Control"] == "max-age=3600")
        #expect(updated["Test-Header"] == "B")
        #expect(updated["Content-Type"] == "text/plain;charset=utf-8")
        #expect(updated.values(for: "Set-Cookie") == ["a=c"])
        #expect(updated["Content-Length"] == "10")
        #expect(updated["Kept"] == "yes")
        #expect(!updated.contains("X-Hop") && !updated.contains("Connection") && !updated.contains("Keep-Alive"))
    }

    static let target = URL(string: "http://example.com:8080/a/b?q=1")!

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "M-SEARCH", "post"])
    func rfc9111Section4_4_unsafeMethodsInvalidateTheTargetAndSameOriginLocations(method: String) {
        for kind in [HTTPCacheKind.private, .shared] {
            let urls = HTTPCachePolicy(kind: kind).invalidatedURLs(
                method: method, requestURL: Self.target, status: 201,
                responseHeaders: [
                    "Location": "/created", "Content-Location": "http://example.com:8080/a/c",
                ])
            #expect(
                urls.map(\.absoluteString) == [
                    "http://example.com:8080/a/b?q=1", "http://example.com:8080/created",
                    "http://example.com:8080/a/c",
                ])
        }
    }

    @Test func rfc9111Section4_4_otherOriginsAreNotInvalidated() {
        let urls = HTTPCachePolicy(kind: .shared).invalidatedURLs(
            method: "POST", requestURL: Self.target, status: 303,
            responseHeaders: [
                "Location": "http://other.example/x", "Content-Location": "https://example.com:8080/a/c",
            ])
        #expect(urls == [Self.target])
        let defaultPort = HTTPCachePolicy(kind: .shared).invalidatedURLs(
            method: "PUT", requestURL: URL(string: "http://example.com/a")!, status: 204,
            responseHeaders: ["Location": "http://example.com:80/b"])
        #expect(defaultPort.count == 2)
    }

    @Test(arguments: [100, 400, 404, 500, 503])
    func rfc9111Section4_4_errorResponsesInvalidateNothing(status: Int) {
        #expect(
            HTTPCachePolicy(kind: .shared).invalidatedURLs(
                method: "POST", requestURL: Self.target, status: status, responseHeaders: [:]
            ).isEmpty)
    }

    @Test(arguments: ["GET", "HEAD", "OPTIONS", "TRACE"])
    func rfc9111Section4_4_safeMethodsInvalidateNothing(method: String) {
        #expect(
            HTTPCachePolicy(kind: .private).invalidatedURLs(
                method: method, requestURL: Self.target, status: 200, responseHeaders: ["Location": "/x"]
            ).isEmpty)
    }
}
