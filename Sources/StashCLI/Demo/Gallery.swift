#if Tool
    import Foundation

    /// The demo's photo gallery: a few hundred generated "photos" of 20 KiB to 2 MiB, the same on
    /// every run, and the bytes of each version of each.
    struct Gallery: Sendable {
        /// One photo of the gallery.
        struct Photo: Sendable, Hashable {
            /// The photo's number, from 1.
            var id: Int
            /// Its size in bytes (the same for every version).
            var size: Int
            /// Its path on the origin.
            var path: String { "/photos/\(id).jpg" }
        }

        /// The smallest photo.
        static let smallestPhoto = 20 * 1024
        /// The largest photo.
        static let largestPhoto = 2 * 1024 * 1024

        /// The photos, in gallery order.
        let photos: [Photo]
        /// Random bytes that photo bodies are cut from.
        private let noise: Data

        /// Creates a gallery of `count` photos whose sizes are spread log-uniformly from
        /// ``smallestPhoto`` to ``largestPhoto`` (many small photos, a few large ones, as in a real
        /// gallery), the same for the same `seed`.
        init(count: Int, seed: UInt64 = 42) {
            var generator = SplitMix64(seed: seed)
            let low = log(Double(Self.smallestPhoto))
            let high = log(Double(Self.largestPhoto))
            photos = (1...max(1, count)).map { id in
                let fraction = Double(generator.next() >> 11) / Double(1 << 53)
                return Photo(id: id, size: Int(exp(low + (high - low) * fraction)))
            }
            var words = [UInt64](repeating: 0, count: 2 * Self.largestPhoto / 8)
            for index in words.indices { words[index] = generator.next() }
            noise = words.withUnsafeBytes { Data($0) }
        }

        /// The photo numbered `id`, if the gallery has it.
        func photo(_ id: Int) -> Photo? {
            photos.indices.contains(id - 1) ? photos[id - 1] : nil
        }

        /// The bytes of version `version` of `photo`: a JPEG start-of-image marker, a line naming
        /// the photo and version, then noise, so that every version of every photo differs.
        func body(of photo: Photo, version: Int) -> Data {
            var data = Data([0xFF, 0xD8, 0xFF, 0xE0])
            data.append(contentsOf: "stash demo photo \(photo.id) version \(version)\n".utf8)
            let offset = (photo.id &* 7919 &+ version &* 104_729) % (noise.count - Self.largestPhoto)
            let start = noise.startIndex + offset
            data.append(noise[start..<(start + photo.size - data.count)])
            return data
        }

        /// The bytes of all photos together.
        var totalSize: Int { photos.reduce(0) { $0 + $1.size } }
    }

    /// A small, fast, seedable random number generator (Vigna's SplitMix64).
    struct SplitMix64: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
#endif
