import Foundation

/// Self-describing values: 8 bytes of seed, then an xorshift stream from it, so that a reader can
/// tell a complete, correct value from a torn or mixed-up one without keeping a copy.
///
/// The test worker writes them and the tests check them (the file is linked into StashTests).
enum SeededValue {
    /// A value of `count` bytes (at least 8) generated from `seed`.
    static func make(_ count: Int, seed: UInt64) -> Data {
        var data = Data(count: max(count, 8))
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            buffer.storeBytes(of: seed.littleEndian, as: UInt64.self)
            var state = seed | 1
            for i in 8..<buffer.count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    /// The seed `data` was generated from, or `nil` when it is not an intact seeded value.
    static func seed(of data: Data) -> UInt64? {
        guard data.count >= 8 else { return nil }
        let seed = data.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        return make(data.count, seed: seed) == data ? seed : nil
    }
}
