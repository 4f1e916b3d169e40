import Foundation
import Testing

@testable import Stash

@Suite struct ChecksumTests {
    @Test func matchesPublishedXXH64Vectors() {
        #expect(Checksum.of(Data()) == 0xEF46_DB37_51D8_E999)
        #expect(Checksum.of(Data("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
    }

    @Test func streamingInAnyChunkingEqualsOneShot() {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 31, 32, 33, 64, 100, 1000] {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let whole = Checksum.of(bytes)
            for chunk in [1, 3, 16, 31, 32, 33] {
                var hasher = Checksum()
                var offset = 0
                while offset < length {
                    let end = min(offset + chunk, length)
                    bytes[offset..<end].withUnsafeBytes { hasher.update($0) }
                    offset = end
                }
                #expect(hasher.finalize() == whole, "length \(length) chunk \(chunk)")
            }
        }
    }
}
