import Foundation
import Stash
import Testing

@testable import StashHTTP

/// What URLSession (FoundationNetworking on Linux) does on its own, and how the loader copes.
@Suite(.timeLimit(.minutes(5)))
struct URLSessionTransportTests {
    /// `"stash " × 20,000` (120,000 bytes), gzip-compressed to 217 bytes.
    private static let gzipBody = Data(
        hexString:
            "1f8b0800000000000203edc4311100000804a02a5673737ffb9f096c0003d9ce546cdbb66ddbb66ddbb66ddbb66ddbb6"
            + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
            + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
            + "6ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb66ddbb6"
            + "6ddbb66ddbb66ddbb66ddbb66ddbb6fd7ca6ca5127c0d40100")

    @Test func gzipEncodedBodyIsDecodedAndStoredWhole() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                server.set("/text", .init(headers: ["Content-Encoding": "gzip"], fixedBody: Self.gzipBody))
                // Content-Length (217) is the encoded length: it must not be taken for the body's.
                let data = try await fixture.loader.data(for: server.url("/text"))
                #expect(data == Data(String(repeating: "stash ", count: 20_000).utf8))
                let key = server.url("/text").absoluteString
                #expect(try await fixture.cache.attributes(forKey: key)?.size == 120_000)
                #expect(server.stats.value.requests == 1)
            }
        }
    }

    @Test func redirectIsFollowedAndCachedUnderTheRequestedURL() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let fixture = try Fixture(directory: directory)
                server.set("/old", .init(status: 301, headers: ["Location": server.url("/new/500").absoluteString]))
                let data = try await fixture.loader.data(for: server.url("/old"))
                #expect(data == TestBody.bytes(500, seed: TestBody.seed(for: "/new/500")))
                #expect(try await fixture.loader.data(for: server.url("/old")) == data)
                #expect(server.stats.value.order == ["/old", "/new/500"])
                let attributes = try await fixture.cache.attributes(forKey: server.url("/old").absoluteString)
                #expect(attributes?.metadata.extra[HTTPFreshness.urlKey] == server.url("/new/500").absoluteString)
            }
        }
    }

    @Test func eachTransportCallLeavesNoTemporaryFilesBehind() async throws {
        try await withTestServer { server in
            try await withTemporaryDirectory { directory in
                let temporary = FileManager.default.temporaryDirectory.path
                let before = Set(
                    try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasSuffix(".tmp") })
                let fixture = try Fixture(directory: directory)
                _ = try await fixture.loader.fileURL(for: server.url("/big/3000000"))
                let after = Set(
                    try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasSuffix(".tmp") })
                #expect(after.subtracting(before).isEmpty)
                #expect(fixture.downloads.isEmpty)
                #expect(filesBelow(directory.appendingPathComponent("tmp")).isEmpty)
            }
        }
    }
}

extension Data {
    fileprivate init(hexString: String) {
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2)
            bytes.append(UInt8(hexString[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}

/// Regular files below `url`.
func filesBelow(_ url: URL) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return [] }
    var files: [String] = []
    while let path = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.appendingPathComponent(path).path, isDirectory: &isDirectory),
            !isDirectory.boolValue
        {
            files.append(path)
        }
    }
    return files
}
