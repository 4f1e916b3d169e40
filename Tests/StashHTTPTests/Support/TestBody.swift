import Foundation

/// Deterministic response bodies: the bytes of a body depend on its seed and offset only, so
/// the server can stream any slice without holding the body, and a test can check what it got.
enum TestBody {
    /// The pattern repeats with this period, a prime, so that it never lines up with chunks.
    static let period = 65_521

    /// One period of the pattern for `seed`.
    static func block(seed: UInt64) -> Data {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var data = Data(count: period)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for index in 0..<buffer.count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    /// `length` bytes of the body for `block`, from `offset`.
    static func slice(_ block: Data, offset: Int, length: Int) -> Data {
        var result = Data(capacity: length)
        var position = offset
        while result.count < length {
            let start = position % period
            let take = min(period - start, length - result.count)
            result.append(block[start..<(start + take)])
            position += take
        }
        return result
    }

    /// The whole body of `size` bytes for `seed`.
    static func bytes(_ size: Int, seed: UInt64) -> Data {
        slice(block(seed: seed), offset: 0, length: size)
    }

    /// A seed derived from a path (FNV-1a), for generated routes.
    static func seed(for path: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }

    /// Whether the file at `url` holds exactly the body of `size` bytes for `seed`, compared in
    /// slices so that a large body is never loaded whole.
    static func fileMatches(_ url: URL, size: Int, seed: UInt64) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let block = block(seed: seed)
        var offset = 0
        let chunk = 1 << 20
        while offset < size {
            guard let data = try handle.read(upToCount: chunk), !data.isEmpty else { return false }
            if data != slice(block, offset: offset, length: data.count) { return false }
            offset += data.count
        }
        return try handle.read(upToCount: 1)?.isEmpty ?? true
    }
}
