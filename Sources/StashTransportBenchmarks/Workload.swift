#if Benchmarks
    import Foundation

    /// The downloads of one run: sizes drawn log-uniformly from 20 KiB to 2 MiB (photos, thumbnails
    /// and documents of a typical gallery), the same sequence for every run and transport.
    enum Workload {
        static let smallest = 20 * 1024
        static let largest = 2 * 1024 * 1024

        /// `count` sizes from a fixed seed.
        static func sizes(count: Int) -> [Int] {
            var state: UInt64 = 0x5354_4153_4854_5250
            return (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let unit = Double(state >> 11) / Double(1 << 53)
                let logSize = log(Double(smallest)) + unit * (log(Double(largest)) - log(Double(smallest)))
                return min(largest, max(smallest, Int(exp(logSize))))
            }
        }

        /// The body the origin serves for `/body/INDEX/SIZE`: a slice of one shared buffer, so that
        /// bodies differ (each starts at another offset) without the origin generating bytes.
        static let pattern: Data = {
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            var data = Data(count: 2 * largest)
            data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
                for index in 0..<buffer.count {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    buffer[index] = UInt8(truncatingIfNeeded: state)
                }
            }
            return data
        }()

        static func body(index: Int, size: Int) -> Data {
            let offset = (index * 7919) % largest
            return pattern.subdata(in: offset..<(offset + size))
        }
    }
#endif
