import Foundation

/// A codec that stores a `String` as its UTF-8 bytes, with no byte-order mark or terminator.
public struct StringCodec: ValueCodec {
    /// Creates the codec.
    public init() {}

    /// Returns the string's UTF-8 bytes.
    ///
    /// - Parameter value: The string.
    /// - Returns: Its UTF-8 encoding.
    public func encode(_ value: String) -> Data { Data(value.utf8) }

    /// Decodes UTF-8 bytes, keeping a leading byte-order mark as part of the string.
    ///
    /// - Parameter data: UTF-8 bytes.
    /// - Returns: The string.
    /// - Throws: ``StashError`` with code ``StashError/Code/decodingFailed`` when `data` is not
    ///   valid UTF-8.
    public func decode(_ data: Data) throws -> String {
        // Decoding repairs invalid sequences with U+FFFD, which changes the bytes; valid UTF-8
        // comes back byte for byte. (`String(data:encoding:)` would also drop a leading BOM.)
        let string = String(decoding: data, as: UTF8.self)
        guard string.utf8.elementsEqual(data) else {
            throw StashError(
                .decodingFailed,
                "The \(data.count) stored bytes are not valid UTF-8, so they cannot be read as a String; "
                    + "remove the entry, or read it with DataCodec if it holds binary data.")
        }
        return string
    }
}
