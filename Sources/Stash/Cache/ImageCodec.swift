#if canImport(UIKit)
    import UIKit
#elseif canImport(AppKit)
    import AppKit
    import ImageIO
#endif

#if canImport(UIKit) || canImport(AppKit)
    import Foundation

    /// A codec that stores images as PNG or JPEG, on Apple platforms.
    ///
    /// With UIKit (iOS, tvOS, watchOS, visionOS, Mac Catalyst) its values are `UIImage`s, which are
    /// `Sendable`. On macOS with AppKit they are ``Image``, a `Sendable` wrapper of a decoded
    /// `CGImage`: `NSImage` is not `Sendable` on macOS 13, while ``Cache`` and `ValueLoader`
    /// hand their values to any task. Make an `NSImage` for a view with ``Image/makeNSImage()``.
    ///
    /// Encoding draws on the image's bitmap; an image with none (an empty image, or one backed
    /// only by a `CIImage`) cannot be encoded. Decoding accepts any format the platform reads.
    public struct ImageCodec: ValueCodec {
        #if canImport(UIKit)
            /// The platform's image type, `UIImage`.
            public typealias Image = UIImage
        #else
            /// A decoded image that a cache can hold and share between tasks on macOS.
            ///
            /// It holds a `CGImage`, which is immutable, rather than an `NSImage`, which is mutable
            /// and not `Sendable` before macOS 14. The codec decodes the bitmap when it reads the
            /// image, so the memory tier holds what is drawn, and its cost is ``byteCount``.
            public struct Image: @unchecked Sendable {
                // @unchecked: the one stored property is a CGImage, an immutable Core Graphics
                // object that any thread may read (older SDKs do not mark it Sendable).

                /// The bitmap.
                public let cgImage: CGImage

                /// Wraps a bitmap.
                ///
                /// - Parameter cgImage: The bitmap.
                public init(cgImage: CGImage) {
                    self.cgImage = cgImage
                }

                /// Takes the bitmap an `NSImage` draws, or returns `nil` when it has none (an
                /// empty image, or one backed only by a `CIImage`).
                ///
                /// - Parameter image: The image.
                public init?(_ image: NSImage) {
                    guard let cgImage = image.cgImage(forProposedRect: nil, context: nil, hints: nil) else {
                        return nil
                    }
                    self.cgImage = cgImage
                }

                /// The size in pixels.
                public var size: CGSize { CGSize(width: cgImage.width, height: cgImage.height) }

                /// The bytes the decoded bitmap takes: a memory tier's cost for the image.
                public var byteCount: Int { cgImage.bytesPerRow * cgImage.height }

                /// Makes an `NSImage` of the bitmap, one pixel to a point, for an AppKit view.
                ///
                /// - Returns: A new image, which the caller owns (not shared with the cache).
                public func makeNSImage() -> NSImage { NSImage(cgImage: cgImage, size: size) }
            }
        #endif

        /// The file format images are stored in.
        public enum Format: Hashable, Sendable {
            /// Lossless PNG, with transparency.
            case png
            /// Lossy JPEG, with a quality from 0 (smallest) to 1 (best), and no transparency.
            case jpeg(quality: Double)
        }

        /// The format ``encode(_:)`` writes.
        public var format: Format

        /// Creates the codec.
        ///
        /// - Parameter format: The format to write. Defaults to ``Format/png``.
        public init(format: Format = .png) {
            self.format = format
        }

        /// Encodes an image in ``format``.
        ///
        /// - Parameter value: The image.
        /// - Returns: PNG or JPEG bytes.
        /// - Throws: ``StashError`` with code ``StashError/Code/invalidArgument`` when the image
        ///   has no bitmap to encode.
        public func encode(_ value: Image) throws -> Data {
            guard let data = Self.encoded(value, as: format) else {
                throw StashError(
                    .invalidArgument,
                    "Cannot encode the \(Int(value.size.width))×\(Int(value.size.height)) image as \(format): it has "
                        + "no bitmap (it is empty or backed only by a CIImage); render it into a bitmap first.")
            }
            return data
        }

        /// Decodes an image.
        ///
        /// - Parameter data: Image bytes in any format the platform reads.
        /// - Returns: The image.
        /// - Throws: ``StashError`` with code ``StashError/Code/decodingFailed`` when `data` is
        ///   not an image.
        public func decode(_ data: Data) throws -> Image {
            guard let image = Self.decoded(data) else {
                throw StashError(
                    .decodingFailed,
                    "The \(data.count) stored bytes are not an image the platform can read; remove the entry or "
                        + "store it again.")
            }
            return image
        }

        #if canImport(UIKit)
            private static func encoded(_ image: UIImage, as format: Format) -> Data? {
                switch format {
                case .png: image.pngData()
                case .jpeg(let quality): image.jpegData(compressionQuality: CGFloat(quality))
                }
            }

            private static func decoded(_ data: Data) -> UIImage? { UIImage(data: data) }
        #else
            private static func encoded(_ image: Image, as format: Format) -> Data? {
                let output = NSMutableData()
                let type: CFString
                var properties: [CFString: Any] = [:]
                switch format {
                case .png: type = "public.png" as CFString
                case .jpeg(let quality):
                    type = "public.jpeg" as CFString
                    properties[kCGImageDestinationLossyCompressionQuality] = quality
                }
                guard let destination = CGImageDestinationCreateWithData(output as CFMutableData, type, 1, nil) else {
                    return nil
                }
                CGImageDestinationAddImage(destination, image.cgImage, properties as CFDictionary)
                guard CGImageDestinationFinalize(destination) else { return nil }
                return output as Data
            }

            /// Decodes the first image in `data` now (not when it is first drawn), so that what
            /// the memory tier holds is the bitmap its cost counts.
            private static func decoded(_ data: Data) -> Image? {
                let options = [kCGImageSourceShouldCacheImmediately: true] as CFDictionary
                guard let source = CGImageSourceCreateWithData(data as CFData, nil),
                    let cgImage = CGImageSourceCreateImageAtIndex(source, 0, options)
                else { return nil }
                return Image(cgImage: cgImage)
            }
        #endif
    }

    extension ValueCodec where Self == ImageCodec {
        /// Stores images as PNG or JPEG: `UIImage`s with UIKit, ``ImageCodec/Image`` (a
        /// `CGImage`) on macOS.
        ///
        /// - Parameter format: The format to write. Defaults to PNG.
        /// - Returns: An ``ImageCodec``.
        public static func image(_ format: ImageCodec.Format = .png) -> ImageCodec {
            ImageCodec(format: format)
        }
    }
#endif
