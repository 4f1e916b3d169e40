import Foundation
import Testing

@testable import Stash

@Suite struct ValueCodecTests {
    private struct Photo: Codable, Equatable {
        var id: Int
        var title: String
        var tags: [String]
        var rating: Double?
        var taken: Date
    }

    private let photo = Photo(
        id: 42, title: "Lake at dawn — 湖", tags: ["lake", "dawn"], rating: nil,
        taken: Date(timeIntervalSince1970: 1_700_000_000))

    /// Round-trips through a codec chosen by a static accessor, as a generic caller would.
    private func roundTrip<Codec: ValueCodec>(_ value: Codec.Value, _ codec: Codec) throws -> Codec.Value {
        try codec.decode(codec.encode(value))
    }

    private func decodingError<Codec: ValueCodec>(_ codec: Codec, _ data: Data) -> StashError? {
        #expect(throws: StashError.self) { try codec.decode(data) }
    }

    @Test func dataCodecStoresBytesUnchanged() throws {
        let bytes = Data([0, 1, 0xFF, 0x80, 0])
        #expect(DataCodec().encode(bytes) == bytes)
        #expect(try roundTrip(bytes, .data) == bytes)
        #expect(try roundTrip(Data(), .data) == Data())
    }

    @Test func stringCodecRoundTripsUTF8IncludingAByteOrderMark() throws {
        for text in ["", "plain", "naïve café 🚀 湖", "\u{FEFF}starts with a BOM", "nul\u{0}inside"] {
            #expect(try roundTrip(text, .string) == text)
            #expect(StringCodec().encode(text) == Data(text.utf8))
        }
    }

    @Test func stringCodecRejectsInvalidUTF8WithDecodingFailed() {
        for bytes: [UInt8] in [[0x61, 0xFF, 0x62], [0xC3], [0xED, 0xA0, 0x80], [0xEF, 0xBF, 0xBD, 0xFF]] {
            let error = decodingError(StringCodec(), Data(bytes))
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("UTF-8") == true)
        }
    }

    @Test func jsonCodecRoundTripsCodableValues() throws {
        #expect(try roundTrip(photo, .json(Photo.self)) == photo)
        #expect(try roundTrip([1, 2, 3], .json([Int].self)) == [1, 2, 3])
        #expect(try roundTrip("a bare string", .json(String.self)) == "a bare string")

        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let codec = JSONCodec<Photo>(encoder: encoder, decoder: decoder)
        #expect(String(decoding: try codec.encode(photo), as: UTF8.self).contains("2023-11-14T22:13:20Z"))
        #expect(try roundTrip(photo, codec) == photo)
    }

    @Test func jsonCodecReportsUndecodableBytesAsDecodingFailed() {
        for text in ["not json", "{\"id\": \"forty-two\"}", ""] {
            let error = decodingError(JSONCodec<Photo>(), Data(text.utf8))
            #expect(error?.code == .decodingFailed)
            #expect(error?.message.contains("Photo") == true)
            #expect(error?.cause is DecodingError)
        }
    }

    @Test func jsonCodecRefusesValuesJSONCannotHoldWithInvalidArgument() {
        let error = #expect(throws: StashError.self) { try JSONCodec<Double>().encode(.nan) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func propertyListCodecRoundTripsCodableValuesAsBinaryPlists() throws {
        let codec = PropertyListCodec<Photo>()
        let data = try codec.encode(photo)
        #expect(data.starts(with: Data("bplist00".utf8)))
        #expect(try codec.decode(data) == photo)
        #expect(try roundTrip(["a": [1, 2]], .propertyList([String: [Int]].self)) == ["a": [1, 2]])
    }

    @Test func propertyListCodecReportsUndecodableBytesAsDecodingFailed() throws {
        let codec = PropertyListCodec<Photo>()
        let error = decodingError(codec, Data("junk".utf8))
        #expect(error?.code == .decodingFailed)
        #expect(error?.message.contains("Photo") == true)

        let truncated = try codec.encode(photo).prefix(20)
        #expect(decodingError(codec, Data(truncated))?.code == .decodingFailed)
    }

    @Test func propertyListCodecRefusesATopLevelScalarWithInvalidArgument() {
        let error = #expect(throws: StashError.self) { try PropertyListCodec<Int>().encode(42) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("JSONCodec") == true)
    }
}
