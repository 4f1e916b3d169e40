import Foundation
import Testing

@testable import StashHTTP

/// One row of a reuse table: a stored response of a given age, a request, and the decision each
/// kind of cache must make.
struct ReuseCase: Sendable, CustomTestStringConvertible {
    enum Expected: Sendable, Equatable {
        case fresh, stale, revalidate, unusable, onlyIfCachedMiss
    }

    var section: String
    var method = "GET"
    var storedMethod = "GET"
    var request: [(String, String)] = []
    var response: [(String, String)]
    /// Seconds since the response arrived.
    var age: TimeInterval = 10
    var varying: [(String, String)] = []
    var own: Expected
    var shared: Expected

    var testDescription: String {
        "§\(section) \(method) \(request) on \(storedMethod) \(response) aged \(age)s"
    }
}

/// Reuse of stored responses (RFC 9111 §4, §4.1, §4.2.4) under request directives (§5.2.1, §5.4)
/// and response directives (§5.2.2), for a private and a shared cache.
@Suite struct HTTPCachePolicyReuseTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let etag = [("ETag", "\"v1\"")]

    static let table: [ReuseCase] = [
        // §4.2: fresh while age < lifetime.
        ReuseCase(section: "4.2", response: [("Cache-Control", "max-age=60")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "4.2", response: [("Cache-Control", "max-age=60")], age: 61, own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.2.10", response: [("Cache-Control", "max-age=5, s-maxage=60")], own: .revalidate,
            shared: .fresh),
        ReuseCase(
            section: "5.2.2.10", response: [("Cache-Control", "max-age=60, s-maxage=5")], own: .fresh,
            shared: .revalidate),
        // §4: the method: a stored GET answers HEAD, a stored HEAD does not answer GET.
        ReuseCase(
            section: "4", method: "HEAD", response: [("Cache-Control", "max-age=60")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "4", storedMethod: "HEAD", response: [("Cache-Control", "max-age=60")], own: .unusable,
            shared: .unusable),
        ReuseCase(
            section: "4", method: "POST", response: [("Cache-Control", "max-age=60")], own: .unusable, shared: .unusable
        ),
        // §4.1: Vary.
        ReuseCase(
            section: "4.1", request: [("Accept-Encoding", "gzip")],
            response: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Encoding")],
            varying: [("Accept-Encoding", "gzip")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "4.1", request: [("Accept-Encoding", "br")],
            response: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Encoding")],
            varying: [("Accept-Encoding", "gzip")], own: .unusable, shared: .unusable),
        ReuseCase(
            section: "4.1", response: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Encoding")],
            varying: [("Accept-Encoding", "gzip")], own: .unusable, shared: .unusable),
        ReuseCase(
            section: "4.1", request: [("Foo", "1")], response: [("Cache-Control", "max-age=60"), ("Vary", "Bar")],
            own: .fresh, shared: .fresh),
        ReuseCase(
            section: "4.1", request: [("Foo", "a,b"), ("Bar", "c")],
            response: [("Cache-Control", "max-age=60"), ("Vary", "foo"), ("Vary", "BAR")],
            varying: [("foo", "a , b"), ("bar", "c")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "4.1", response: [("Cache-Control", "max-age=60"), ("Vary", "*")], own: .unusable,
            shared: .unusable),
        // §5.2.1: request directives.
        ReuseCase(
            section: "5.2.1.4", request: [("Cache-Control", "no-cache")], response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.4", request: [("Pragma", "no-cache")], response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.4", request: [("Pragma", "no-cache"), ("Cache-Control", "max-stale")],
            response: [("Cache-Control", "max-age=60")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "5.2.1.5", request: [("Cache-Control", "no-store")], response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.1.1", request: [("Cache-Control", "max-age=0")], response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.1.1", request: [("Cache-Control", "max-age=5")], response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.1.1", request: [("Cache-Control", "max-age=30")], response: [("Cache-Control", "max-age=60")],
            own: .fresh, shared: .fresh),
        ReuseCase(
            section: "5.2.1.3", request: [("Cache-Control", "min-fresh=55")],
            response: [("Cache-Control", "max-age=60")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.1.3", request: [("Cache-Control", "min-fresh=20")],
            response: [("Cache-Control", "max-age=60")],
            own: .fresh, shared: .fresh),
        ReuseCase(
            section: "5.2.1.2", request: [("Cache-Control", "max-stale=1000")],
            response: [("Cache-Control", "max-age=1")],
            own: .stale, shared: .stale),
        ReuseCase(
            section: "5.2.1.2", request: [("Cache-Control", "max-stale=5")], response: [("Cache-Control", "max-age=1")],
            own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.1.2", request: [("Cache-Control", "max-stale")], response: [("Cache-Control", "max-age=1")],
            age: 100_000, own: .stale, shared: .stale),
        // §5.2.2.2 / §5.2.2.8 / §5.2.2.10: no stale serve with must-revalidate, proxy-revalidate, s-maxage.
        ReuseCase(
            section: "5.2.2.2", request: [("Cache-Control", "max-stale")],
            response: [("Cache-Control", "max-age=1, must-revalidate")], own: .revalidate, shared: .revalidate),
        ReuseCase(
            section: "5.2.2.8", request: [("Cache-Control", "max-stale")],
            response: [("Cache-Control", "max-age=1, proxy-revalidate")], own: .stale, shared: .revalidate),
        ReuseCase(
            section: "5.2.2.10", request: [("Cache-Control", "max-stale")],
            response: [("Cache-Control", "max-age=1, s-maxage=1")], own: .stale, shared: .revalidate),
        ReuseCase(
            section: "5.2.2.2", response: [("Cache-Control", "max-age=60, must-revalidate")], own: .fresh,
            shared: .fresh),
        // §5.2.2.4: no-cache revalidates even when fresh; the qualified form does not.
        ReuseCase(
            section: "5.2.2.4", response: [("Cache-Control", "max-age=10000, No-CaChE")], own: .revalidate,
            shared: .revalidate),
        ReuseCase(
            section: "5.2.2.4", response: [("Cache-Control", #"max-age=10000, no-cache="x""#)], own: .fresh,
            shared: .fresh),
        // §5.2.1.7: only-if-cached.
        ReuseCase(
            section: "5.2.1.7", request: [("Cache-Control", "only-if-cached")],
            response: [("Cache-Control", "max-age=60")], own: .fresh, shared: .fresh),
        ReuseCase(
            section: "5.2.1.7", request: [("Cache-Control", "only-if-cached")],
            response: [("Cache-Control", "max-age=1")], own: .onlyIfCachedMiss, shared: .onlyIfCachedMiss),
        ReuseCase(
            section: "5.2.1.7", request: [("Cache-Control", "only-if-cached, max-stale")],
            response: [("Cache-Control", "max-age=1")], own: .stale, shared: .stale),
        ReuseCase(
            section: "5.2.1.7", request: [("Cache-Control", "only-if-cached"), ("Accept", "b")],
            response: [("Cache-Control", "max-age=60"), ("Vary", "Accept")], varying: [("Accept", "a")],
            own: .onlyIfCachedMiss, shared: .onlyIfCachedMiss),
    ]

    @Test(arguments: table)
    func rfc9111Section4_reusesOnlyWhatTheRequestAndResponseAllow(row: ReuseCase) {
        let stored = StoredResponse(
            method: row.storedMethod, status: 200, headers: HTTPFields(row.response + Self.etag),
            requestTime: Self.now, responseTime: Self.now, varyingRequestHeaders: HTTPFields(row.varying))
        for kind in [HTTPCacheKind.private, .shared] {
            let decision = HTTPCachePolicy(kind: kind).reuse(
                method: row.method, requestHeaders: HTTPFields(row.request), stored: stored,
                now: Self.now.addingTimeInterval(row.age))
            #expect(Self.expected(decision) == (kind == .private ? row.own : row.shared), "\(kind): \(decision)")
        }
    }

    private static func expected(_ decision: HTTPCacheReuse) -> ReuseCase.Expected {
        switch decision {
        case .fresh: .fresh
        case .stale: .stale
        case .revalidate: .revalidate
        case .unusable: .unusable
        case .onlyIfCachedMiss: .onlyIfCachedMiss
        }
    }

    @Test(arguments: [HTTPCacheKind.private, .shared])
    func rfc9111Section4_2_3_aFreshResponseCarriesItsCurrentAge(kind: HTTPCacheKind) {
        let stored = StoredResponse(
            status: 200, headers: ["Cache-Control": "max-age=3600", "Age": "100"], requestTime: Self.now,
            responseTime: Self.now)
        let decision = HTTPCachePolicy(kind: kind).reuse(
            method: "GET", requestHeaders: [:], stored: stored, now: Self.now.addingTimeInterval(20))
        #expect(decision == .fresh(age: .seconds(120)))
    }

    @Test(arguments: [HTTPCacheKind.private, .shared])
    func rfc9111Section4_3_1_revalidationSendsTheStoredValidators(kind: HTTPCacheKind) {
        let stored = StoredResponse(
            status: 200,
            headers: ["Cache-Control": "no-cache", "ETag": "\"a\"", "Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT"],
            requestTime: Self.now, responseTime: Self.now)
        let decision = HTTPCachePolicy(kind: kind).reuse(
            method: "GET", requestHeaders: [:], stored: stored, now: Self.now)
        #expect(
            decision
                == .revalidate(validators: [
                    "If-None-Match": "\"a\"", "If-Modified-Since": "Thu, 01 Jan 2026 00:00:00 GMT",
                ]))
        let bare = StoredResponse(status: 200, headers: [:], requestTime: Self.now, responseTime: Self.now)
        #expect(
            HTTPCachePolicy(kind: kind).reuse(method: "GET", requestHeaders: [:], stored: bare, now: Self.now)
                == .revalidate(validators: [:]))
    }

    @Test func rfc9111Section4_2_4_staleServesAreForbiddenByNoCacheMustRevalidateAndForSharedProxyRevalidate() {
        func stored(_ control: String) -> StoredResponse {
            StoredResponse(
                status: 200, headers: ["Cache-Control": control], requestTime: Self.now, responseTime: Self.now)
        }
        let own = HTTPCachePolicy(kind: .private)
        let shared = HTTPCachePolicy(kind: .shared)
        #expect(own.mayServeStale(stored("max-age=1")) && shared.mayServeStale(stored("max-age=1")))
        #expect(!own.mayServeStale(stored("max-age=1, must-revalidate")))
        #expect(!own.mayServeStale(stored("no-cache")))
        #expect(own.mayServeStale(stored("max-age=1, proxy-revalidate")))
        #expect(!shared.mayServeStale(stored("max-age=1, proxy-revalidate")))
        #expect(!shared.mayServeStale(stored("s-maxage=1")))
        #expect(shared.staleness(of: stored("max-age=1"), now: Self.now.addingTimeInterval(11)) == .seconds(10))
        #expect(shared.staleness(of: stored("max-age=100"), now: Self.now.addingTimeInterval(11)) == .zero)
    }
}
