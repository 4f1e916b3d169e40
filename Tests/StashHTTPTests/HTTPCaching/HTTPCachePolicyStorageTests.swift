import Foundation
import Testing

@testable import StashHTTP

/// One row of a storage table: a request and response, and whether each kind of cache may store it.
struct StorageCase: Sendable, CustomTestStringConvertible {
    var section: String
    var method = "GET"
    var request: [(String, String)] = []
    var status = 200
    var response: [(String, String)]
    var privateStores: Bool
    var sharedStores: Bool

    var testDescription: String {
        "§\(section) \(method) \(request) → \(status) \(response)"
    }
}

/// Which responses may be stored, and with which header fields (RFC 9111 §3), for a private and a
/// shared cache.
@Suite struct HTTPCachePolicyStorageTests {
    static let table: [StorageCase] = [
        // §3: the method must be understood and cacheable.
        StorageCase(section: "3", response: [("Cache-Control", "max-age=60")], privateStores: true, sharedStores: true),
        StorageCase(
            section: "3", method: "HEAD", response: [("Cache-Control", "max-age=60")], privateStores: true,
            sharedStores: true),
        StorageCase(
            section: "3", method: "POST", response: [("Cache-Control", "max-age=60")], privateStores: false,
            sharedStores: false),
        // §3: the status must be final; 206 and 304 are not stored as responses.
        StorageCase(
            section: "3", status: 100, response: [("Cache-Control", "max-age=60")], privateStores: false,
            sharedStores: false),
        StorageCase(
            section: "3", status: 206, response: [("Cache-Control", "max-age=60")], privateStores: false,
            sharedStores: false),
        StorageCase(
            section: "3", status: 304, response: [("Cache-Control", "max-age=60")], privateStores: false,
            sharedStores: false),
        // §3 + §4.2.2: without explicit freshness only heuristically cacheable statuses.
        StorageCase(section: "4.2.2", status: 200, response: [], privateStores: true, sharedStores: true),
        StorageCase(section: "4.2.2", status: 404, response: [], privateStores: true, sharedStores: true),
        StorageCase(section: "4.2.2", status: 501, response: [], privateStores: true, sharedStores: true),
        StorageCase(section: "4.2.2", status: 201, response: [], privateStores: false, sharedStores: false),
        StorageCase(section: "4.2.2", status: 302, response: [], privateStores: false, sharedStores: false),
        StorageCase(section: "4.2.2", status: 503, response: [], privateStores: false, sharedStores: false),
        StorageCase(section: "4.2.2", status: 599, response: [], privateStores: false, sharedStores: false),
        // §3: any final status with explicit freshness, or public.
        StorageCase(
            section: "3", status: 503, response: [("Cache-Control", "max-age=60")], privateStores: true,
            sharedStores: true),
        StorageCase(
            section: "5.3", status: 302, response: [("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")],
            privateStores: true, sharedStores: true),
        StorageCase(
            section: "5.2.2.9", status: 599, response: [("Cache-Control", "public")], privateStores: true,
            sharedStores: true),
        StorageCase(
            section: "5.2.2.10", status: 307, response: [("Cache-Control", "s-maxage=60")], privateStores: false,
            sharedStores: true),
        StorageCase(
            section: "5.2.2.7", status: 307, response: [("Cache-Control", "private")], privateStores: true,
            sharedStores: false),
        // §5.2.2.5 / §5.2.1.5: no-store in the response or the request.
        StorageCase(
            section: "5.2.2.5", response: [("Cache-Control", "max-age=10000, No-StOrE")], privateStores: false,
            sharedStores: false),
        StorageCase(
            section: "5.2.1.5", request: [("Cache-Control", "no-store")], response: [("Cache-Control", "max-age=60")],
            privateStores: false, sharedStores: false),
        // §5.2.2.3: must-understand stores understood statuses despite no-store, and no others.
        StorageCase(
            section: "5.2.2.3", response: [("Cache-Control", "must-understand, no-store, max-age=60")],
            privateStores: true, sharedStores: true),
        StorageCase(
            section: "5.2.2.3", status: 299, response: [("Cache-Control", "must-understand, no-store, max-age=60")],
            privateStores: false, sharedStores: false),
        // §5.2.2.7: private is for private caches only.
        StorageCase(
            section: "5.2.2.7", response: [("Cache-Control", "private, max-age=3600")], privateStores: true,
            sharedStores: false),
        StorageCase(
            section: "5.2.2.7", response: [("Cache-Control", "max-age=3600"), ("cache-control", "PRIVATE")],
            privateStores: true, sharedStores: false),
        StorageCase(
            section: "5.2.2.7", response: [("Cache-Control", #"private="set-cookie", max-age=3600"#)],
            privateStores: true, sharedStores: true),
        // §3.5: Authorization, in a shared cache, needs public, s-maxage or must-revalidate.
        StorageCase(
            section: "3.5", request: [("Authorization", "FOO")],
            response: [("Expires", "Thu, 01 Jan 2099 00:00:00 GMT"), ("Date", "Thu, 01 Jan 2026 00:00:00 GMT")],
            privateStores: true, sharedStores: false),
        StorageCase(
            section: "3.5", request: [("authorization", "FOO")], response: [("Cache-Control", "max-age=3600")],
            privateStores: true, sharedStores: false),
        StorageCase(
            section: "3.5", request: [("Authorization", "FOO")], response: [("Cache-Control", "max-age=3600, public")],
            privateStores: true, sharedStores: true),
        StorageCase(
            section: "3.5", request: [("Authorization", "FOO")],
            response: [("Cache-Control", "max-age=3600, must-revalidate")], privateStores: true, sharedStores: true),
        StorageCase(
            section: "3.5", request: [("Authorization", "FOO")], response: [("Cache-Control", "s-maxage=3600")],
            privateStores: true, sharedStores: true),
        StorageCase(
            section: "3.5", request: [("Authorization", "FOO")],
            response: [("Cache-Control", "public, private, max-age=60")], privateStores: true, sharedStores: false),
    ]

    @Test(arguments: table)
    func rfc9111Section3_storesOnlyWhatEachKindMay(row: StorageCase) {
        for kind in [HTTPCacheKind.private, .shared] {
            let stored = HTTPCachePolicy(kind: kind).storableHeaders(
                method: row.method, requestHeaders: HTTPFields(row.request), status: row.status,
                responseHeaders: HTTPFields(row.response))
            #expect((stored != nil) == (kind == .private ? row.privateStores : row.sharedStores), "\(kind)")
        }
    }

    @Test(arguments: [HTTPCacheKind.private, .shared])
    func rfc9111Section3_1_hopByHopFieldsAndThoseConnectionNamesAreNotStored(kind: HTTPCacheKind) {
        let response = HTTPFields([
            ("Connection", "a, B"), ("a", "1"), ("b", "2"), ("c", "3"), ("Keep-Alive", "timeout=5"),
            ("Transfer-Encoding", "chunked"), ("Proxy-Authenticate", "Basic"), ("Cache-Control", "max-age=3600"),
            ("Set-Cookie", "a=b"),
        ])
        let stored = HTTPCachePolicy(kind: kind).storableHeaders(
            method: "GET", requestHeaders: [:], status: 200, responseHeaders: response)
        #expect(stored?.map(\.name) == ["c", "Cache-Control", "Set-Cookie"])
    }

    @Test(arguments: [HTTPCacheKind.private, .shared])
    func rfc9111Section5_2_2_4_fieldsNamedByQualifiedNoCacheAreNotStored(kind: HTTPCacheKind) {
        let response = HTTPFields([
            ("Cache-Control", #"no-cache="a, b""#), ("a", "1"), ("b", "2"), ("c", "3"),
            ("Cache-Control", "max-age=3600"),
        ])
        let stored = HTTPCachePolicy(kind: kind).storableHeaders(
            method: "GET", requestHeaders: [:], status: 200, responseHeaders: response)
        #expect(stored?.map(\.name) == ["Cache-Control", "c", "Cache-Control"])
    }

    @Test func rfc9111Section5_2_2_7_aSharedCacheStoresPrivateQualifiedResponsesWithoutTheNamedFields() {
        let response = HTTPFields([
            ("Cache-Control", #"private="Set-Cookie", max-age=60"#), ("Set-Cookie", "session=A"), ("ETag", "\"1\""),
        ])
        let shared = HTTPCachePolicy(kind: .shared).storableHeaders(
            method: "GET", requestHeaders: [:], status: 200, responseHeaders: response)
        #expect(shared?.contains("Set-Cookie") == false)
        #expect(shared?["ETag"] == "\"1\"")
        let own = HTTPCachePolicy(kind: .private).storableHeaders(
            method: "GET", requestHeaders: [:], status: 200, responseHeaders: response)
        #expect(own?["Set-Cookie"] == "session=A")
    }

    @Test func rfc9111Section3_3_aBodyShorterOrLongerThanContentLengthIsIncomplete() {
        let policy = HTTPCachePolicy(kind: .shared)
        #expect(policy.isComplete(bodyLength: 10, responseHeaders: ["Content-Length": "10"]))
        #expect(!policy.isComplete(bodyLength: 9, responseHeaders: ["Content-Length": "10"]))
        #expect(!policy.isComplete(bodyLength: 11, responseHeaders: ["Content-Length": "10"]))
        #expect(policy.isComplete(bodyLength: 10, responseHeaders: ["Content-Length": "10, 10"]))
        #expect(!policy.isComplete(bodyLength: 10, responseHeaders: ["Content-Length": "10, 11"]))
        #expect(!policy.isComplete(bodyLength: 10, responseHeaders: ["Content-Length": "ten"]))
        #expect(policy.isComplete(bodyLength: 10, responseHeaders: [:]))
    }

    @Test func rfc9111Section4_1_theVaryingRequestFieldsAreRecorded() {
        let policy = HTTPCachePolicy(kind: .private)
        let varying = policy.varyingRequestHeaders(
            responseHeaders: HTTPFields([("Vary", "Accept-Encoding"), ("vary", "X-Foo, accept-encoding")]),
            requestHeaders: ["Accept-Encoding": "gzip", "X-Other": "1", "User-Agent": "t"])
        #expect(varying == ["accept-encoding": "gzip"])
    }
}
