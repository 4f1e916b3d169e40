import Foundation

/// A streaming XXH64 hash (seed 0), used as each entry's checksum.
///
/// XXH64 is not cryptographic; it detects truncation, bit rot and torn writes at several
/// gigabytes per second, which is what an integrity check on a cache's hot path needs.
struct Checksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    private var v1: UInt64 = p1 &+ p2
    private var v2: UInt64 = p2
    private var v3: UInt64 = 0
    private var v4: UInt64 = 0 &- p1
    private var totalLength: UInt64 = 0
    private var tail: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var tailCount = 0

    /// The hash of `bytes` in one call.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hasher = Checksum()
        hasher.update(bytes)
        return hasher.finalize()
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* p1 &+ p4
    }

    @inline(__always)
    private static func stripe(_ v: inout (UInt64, UInt64, UInt64, UInt64), _ p: UnsafeRawPointer) {
        v.0 = round(v.0, UInt64(littleEndian: p.loadUnaligned(as: UInt64.self)))
        v.1 = round(v.1, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        v.2 = round(v.2, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        v.3 = round(v.3, UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    /// Adds `bytes` to the hash.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, !bytes.isEmpty else { return }
        var remaining = bytes.count
        totalLength &+= UInt64(remaining)
        var buffer = tail
        var count = tailCount
        var accumulators = (v1, v2, v3, v4)
        withUnsafeMutableBytes(of: &buffer) { tailBytes in
            if count > 0 {
                let take = min(32 - count, remaining)
                tailBytes.baseAddress!.advanced(by: count).copyMemory(from: p, byteCount: take)
                count += take
                p += take
                remaining -= take
                if count < 32 { return }
                Self.stripe(&accumulators, UnsafeRawPointer(tailBytes.baseAddress!))
                count = 0
            }
            while remaining >= 32 {
                Self.stripe(&accumulators, p)
                p += 32
                remaining -= 32
            }
            if remaining > 0 {
                tailBytes.baseAddress!.copyMemory(from: p, byteCount: remaining)
                count = remaining
            }
        }
        (v1, v2, v3, v4) = accumulators
        tail = buffer
        tailCount = count
    }

    /// The hash of everything added so far.
    func finalize() -> UInt64 {
        var h: UInt64
        if totalLength >= 32 {
            h = Self.rotl(v1, 1) &+ Self.rotl(v2, 7) &+ Self.rotl(v3, 12) &+ Self.rotl(v4, 18)
            h = Self.merge(h, v1)
            h = Self.merge(h, v2)
            h = Self.merge(h, v3)
            h = Self.merge(h, v4)
        } else {
            h = Self.p5
        }
        h &+= totalLength
        var copy = tail
        withUnsafeBytes(of: &copy) { tailBytes in
            var offset = 0
            while offset + 8 <= tailCount {
                let k = UInt64(littleEndian: tailBytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                h ^= Self.round(0, k)
                h = Self.rotl(h, 27) &* Self.p1 &+ Self.p4
                offset += 8
            }
            if offset + 4 <= tailCount {
                let k = UInt64(UInt32(littleEndian: tailBytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                h ^= k &* Self.p1
                h = Self.rotl(h, 23) &* Self.p2 &+ Self.p3
                offset += 4
            }
            while offset < tailCount {
                h ^= UInt64(tailBytes[offset]) &* Self.p5
                h = Self.rotl(h, 11) &* Self.p1
                offset += 1
            }
        }
        h ^= h >> 33
        h &*= Self.p2
        h ^= h >> 29
        h &*= Self.p3
        h ^= h >> 32
        return h
    }
}

extension Checksum {
    /// The hash of `data`.
    static func of(_ data: some ContiguousBytes) -> UInt64 {
        data.withUnsafeBytes { of($0) }
    }
}
