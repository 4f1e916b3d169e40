#if canImport(UIKit)
    import UIKit
#elseif canImport(AppKit)
    import AppKit
#endif

#if canImport(UIKit) || canImport(AppKit)
    import Foundation

    /// A codec that stores images as PNG or JPEG, on Apple platforms.
    ///
    /// Encoding draws on the image's bitmap; an image with none (an empty image, or one backed
    /// only by a `CIImage`) cannot be encoded. Decoding accepts any format the platform reads.
    public struct ImageCodec: ValueCodec {
        #if canImport(UIKit)
            /// The platform's image type, `UIImage`.
            public typealias Image = UIImage
        #else
            /// The platform's image type, `NSImage`.
            public typealias Image = NSImage
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
            guard let image = Image(data: data) else {
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
        #else
            private static func encoded(_ image: NSImage, as format: Format) -> Data? {
                guard let cgImage = image.cgImage(forProposedRect: nil, context: nil, hints: nil) else { return nil }
                let bitmap = NSBitmapImageRep(cgImage: cgImage)
                switch format {
                case .png: return bitmap.representation(using: .png, properties: [:])
                case .jpeg(let quality):
                    return bitmap.representation(using: .jpeg, properties: [.compressionFactor: quality])
                }
            }
        #endif
    }

    extension ValueCodec where Self == ImageCodec {
        /// Stores platform images (`UIImage` or `NSImage`) as PNG or JPEG.
        ///
        /// - Parameter format: The format to write. Defaults to PNG.
        /// - Returns: An ``ImageCodec``.
        public static func image(_ format: ImageCodec.Format = .png) -> ImageCodec {
            ImageCodec(format: format)
        }
    }
#endif
