import Testing

@testable import Stash

@Suite struct ByteCountTests {
    @Test func parsesDecimalAndBinaryUnits() throws {
        #expect(try ByteCount(parsing: "10MB") == .megabytes(10))
        #expect(try ByteCount(parsing: "512 KiB").bytes == 512 * 1024)
        #expect(try ByteCount(parsing: "1.5g").bytes == 1_500_000_000)
        #expect(try ByteCount(parsing: "4096").bytes == 4096)
        #expect(try ByteCount(parsing: "64MiB") == .mebibytes(64))
    }

    @Test func rejectsMalformedSizesWithInvalidArgument() {
        for text in ["", "ten MB", "10XB", "-5MB", "1e999GB"] {
            let error = #expect(throws: StashError.self) { try ByteCount(parsing: text) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("'\(text)'") == true)
        }
    }

    @Test func describesSizesInHumanUnits() {
        #expect(ByteCount(320).description == "320 B")
        #expect(ByteCount.megabytes(1.5).description == "1.5 MB")
    }
}
