#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash
    import StashHTTP
    @testable import StashServer
    import Testing

    /// The ``StoredHead`` record a stored response carries in its disk-tier metadata: a disk hit
    /// read from it answers exactly as one decoded from the header fields would.
    @Suite struct ServeStoredHeadTests {
        static func temporaryDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-head-\(UUID())")
        }

        /// A response stored in a real disk cache and read back as the proxy's disk hit reads it:
        /// the entry's stored `extra` text.
        static func storedText(of response: CachedResponse, directory: URL) throws -> String {
            let disk = try DiskCache(directory: directory)
            try disk.store(Data("body".utf8), forKey: "k", metadata: response.metadata)
            try disk.flush()
            let entry = try #require(try disk.entry(forKey: "k", decodingExtra: false))
            #expect(entry.hasStoredExtra)
            return try #require(entry.storedExtra)
        }

        static func response(_ fields: [(String, String)], age: TimeInterval = 0) -> CachedResponse {
            let responseTime = Date(timeIntervalSince1970: 1_790_000_000.123456)
            var headers = HTTPHeaders()
            for (name, value) in fields { headers.add(name: name, value: value) }
            return CachedResponse(
                status: 200, headers: headers, varyValues: [:], requestTime: responseTime.addingTimeInterval(-0.25),
                responseTime: responseTime, body: nil, bodyLength: 4)
        }

        /// Field values with every byte the JSON text escapes (quotes, backslashes, a tab, a
        /// control character) and non-ASCII UTF-8: the record's head is byte for byte the head
        /// that decoding the fields encodes, with the same freshness (RFC 9111 §4.2.1), initial
        /// age (§4.2.3: the origin's `Age` counts) and times; the fields decoded later from the
        /// same text are the stored ones.
        @Test func theRecordGivesTheHeadTheFieldsGive() throws {
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let original = Self.response([
                ("Cache-Control", "max-age=3600, s-maxage=600"), ("ETag", #""v\"1\\""#), ("Age", "30"),
                ("X-Tab", "a\tb"), ("X-Control", "a\u{1}b"), ("X-Note", "café / naïve"),
                ("Content-Type", "text/plain"),
            ])
            let text = try Self.storedText(of: original, directory: directory)
            let record = try #require(StoredHead.read(fromExtra: text))
            #expect(record.status == 200)
            #expect(record.requestTime == original.requestTime)
            #expect(record.responseTime == original.responseTime)
            #expect(record.plainFreshUntil == original.plainFreshUntil)
            #expect(original.plainFreshUntil != nil)
            #expect(abs((record.initialAge - original.initialAge) / .seconds(1)) < 1e-6)
            #expect(original.initialAge >= .seconds(30))
            #expect(record.fieldBytes == original.fieldBytes)
            #expect(Array(record.encodedHead.readableBytesView) == Array(original.encodedHead.readableBytesView))

            let read = CachedResponse(record: record, text: text, bodyLength: 4)
            #expect(read.memoryCost >= original.memoryCost)
            #expect(read.headers == original.headers)
            #expect(read.servedHeaders == original.servedHeaders)
            #expect(read.stored == original.stored)
            let now = original.responseTime.addingTimeInterval(100)
            #expect(ServePolicy.ageSeconds(read, now: now) == ServePolicy.ageSeconds(original, now: now))
        }

        /// A response that must be validated before each reuse (`no-cache`, RFC 9111 §5.2.2.4)
        /// has no plain freshness in its record either.
        @Test func aResponseThatIsNeverPlainFreshHasNoFreshnessInItsRecord() throws {
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let original = Self.response([("Cache-Control", "no-cache"), ("ETag", "\"a\"")])
            #expect(original.plainFreshUntil == nil)
            let text = try Self.storedText(of: original, directory: directory)
            let record = try #require(StoredHead.read(fromExtra: text))
            #expect(record.plainFreshUntil == nil)
        }

        /// Text without a record this build reads answers `nil` (the disk hit then decodes the
        /// fields): no record, another version, another shape, an escape the reader does not take.
        @Test func textWithoutAReadableRecordIsNotRead() {
            let one = "3ff0000000000000", two = "4000000000000000", half = "3fe0000000000000"
            let line = "204 \(one) \(two) - \(half) 7"
            #expect(StoredHead.read(fromExtra: #"{"serve.status":"200"}"#) == nil)
            #expect(StoredHead.read(fromExtra: #"{"serve.head":"2 \#(line)\nH\r\n"}"#) == nil)
            #expect(StoredHead.read(fromExtra: #"{ "serve.head":"1 \#(line)\nH"}"#) == nil)
            #expect(StoredHead.read(fromExtra: #"{"serve.head":"1 \#(line)\nH\u00e9"}"#) == nil)
            let notANumber = "204 7ff8000000000000 \(two) - \(half) 7"
            #expect(StoredHead.read(fromExtra: #"{"serve.head":"1 \#(notANumber)\nH"}"#) == nil)
            #expect(StoredHead.read(fromExtra: #"{"serve.head":"1 204 1.0 2.0 - 0.5 7\nH"}"#) == nil)
            #expect(StoredHead.read(fromExtra: "") == nil)
            let found = StoredHead.read(fromExtra: #"{"a":"x\"y","serve.head":"1 \#(line)\nH\r\n"}"#)
            #expect(found?.status == 204)
            #expect(found?.responseTime == Date(timeIntervalSince1970: 2))
            #expect(found?.plainFreshUntil == nil)
            #expect(found?.initialAge == .milliseconds(500))
            #expect(found?.fieldBytes == 7)
            #expect(found.map { String(buffer: $0.encodedHead) } == "H\r\n")
        }

        /// A response stored with `Vary` values carries no record: its disk hits decode the
        /// fields, whose `Vary` values the request must match (RFC 9111 §4.1).
        @Test func aVariantCarriesNoRecord() {
            let responseTime = Date(timeIntervalSince1970: 1_790_000_000)
            let variant = CachedResponse(
                status: 200, headers: HTTPHeaders([("Cache-Control", "max-age=60"), ("Vary", "Accept")]),
                varyValues: ["accept": "text/html"], requestTime: responseTime, responseTime: responseTime, body: nil,
                bodyLength: 0)
            #expect(variant.metadata.extra[CachedResponse.Field.head] == nil)
            #expect(Self.response([("Cache-Control", "max-age=60")]).metadata.extra[CachedResponse.Field.head] != nil)
        }
    }
#endif
