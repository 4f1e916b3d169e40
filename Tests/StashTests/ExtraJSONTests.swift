import Foundation
import Testing

@testable import Stash

/// The reader of the disk tier's `extra` metadata answers what `JSONDecoder` answers.
struct ExtraJSONTests {
    /// What `JSONEncoder` writes (the disk tier's own encoding) reads back whole, escapes,
    /// control characters, `/`, non-ASCII and characters outside the BMP included.
    @Test func readsWhatJSONEncoderWrites() throws {
        let samples: [[String: String]] = [
            [:],
            ["serve.status": "200", "serve.request-time": "1764300000.25"],
            [
                "q": #"say "hi" \ there, {[:]}/"#, "ctl": "a\u{0}b\u{1F}c\td\ne\rf\u{8}\u{C}",
                "caf\u{E9}": "\u{65E5}\u{672C} \u{1F600}", "": "",
            ],
        ]
        for sample in samples {
            let text = try #require(String(data: JSONEncoder().encode(sample), encoding: .utf8))
            #expect(ExtraJSON.objectOfStrings(text) == sample, "\(text)")
            #expect(DiskCache.decodeExtra(text) == sample)
            let written = ExtraJSON.text(sample)
            #expect(try JSONDecoder().decode([String: String].self, from: Data(written.utf8)) == sample, "\(written)")
            #expect(ExtraJSON.objectOfStrings(written) == sample)
        }
    }

    /// Escapes that `JSONEncoder` does not write but JSON allows (RFC 8259 §7) read as
    /// `JSONDecoder` reads them; text it cannot read exactly is left to `JSONDecoder`.
    @Test func agreesWithJSONDecoder() throws {
        let valid = [
            #"{"a":"\u00e9\u65E5\ud83d\ude00","b":"\/\b\f"}"#, #" { "a" : "b" , "c":"d" } "#,
        ]
        for text in valid {
            let expected = try JSONDecoder().decode([String: String].self, from: Data(text.utf8))
            #expect(ExtraJSON.objectOfStrings(text) == expected, "\(text)")
        }
        let others = [
            #"{"a":1}"#, #"{"a":"b",}"#, #"{"a":"b"} x"#, #"["a"]"#, #"{"a":"\ud83d"}"#, #"{"a":"\x"}"#,
            "{\"a\":\"b\u{1}\"}", #"{"a":"b"#, "",
        ]
        for text in others {
            #expect(ExtraJSON.objectOfStrings(text) == nil, "\(text)")
            let expected = (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
            #expect(DiskCache.decodeExtra(text) == expected, "\(text)")
        }
    }
}

/// A value file's description, written by hand, reads back whole with `JSONDecoder`, and one
/// `JSONEncoder` wrote (as earlier versions did) still reads.
struct ValueSidecarEncodingTests {
    @Test func readsBackWhatItWritesAndWhatJSONEncoderWrote() throws {
        let extra = #"{"serve.headers":"content-type: text/plain\n","q":"say \"hi\" \\ there /"}"#
        let samples = [
            ValueSidecar(
                key: Data("k".utf8).base64EncodedString(), size: 0, checksum: 0, pinned: false, created: 0,
                expires: nil, contentType: nil, etag: nil, lastModified: nil, extra: nil),
            ValueSidecar(
                key: Data("https://example.com/a?b=c".utf8).base64EncodedString(), size: 524_288,
                checksum: .max, pinned: true, created: 1_764_300_000.123_456_7, expires: 1e-5,
                contentType: "text/plain; charset=\"utf-8\"", etag: #"W/"x\y""#,
                lastModified: "Sun, 29 Nov 2026 23:00:00 GMT", extra: extra),
            ValueSidecar(
                key: "", size: Int.max, checksum: 1, pinned: false, created: -1.5, expires: 1e300,
                contentType: "a\u{0}b\u{1F}c\td\r\u{8}\u{C}", etag: "caf\u{E9} \u{65E5}\u{1F600}",
                lastModified: "", extra: ""),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for sample in samples {
            let written = try sample.encoded()
            #expect(ValueSidecar.decode(written) == sample, "\(String(decoding: written, as: UTF8.self))")
            #expect(ValueSidecar.decode(ValueSidecar.magic + (try encoder.encode(sample))) == sample)
        }
        var infinite = samples[0]
        infinite.created = .infinity
        #expect(throws: StashError.self) { try infinite.encoded() }
    }
}
