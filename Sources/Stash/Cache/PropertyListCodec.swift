import Foundation

/// A codec that stores `Codable` values as binary property lists.
///
/// A property list's top level must be an array or a dictionary: encode a struct, a class or
/// a collection, not a bare number or string (use ``JSONCodec`` or ``StringCodec`` for those).
public struct PropertyListCodec<Value: Codable>: ValueCodec {
    /// Creates the codec.
    public init() {}

    /// Encodes a value as a binary property list.
    ///
    /// - Parameter value: The value.
    /// - Returns: The property list, in binary format.
    /// - Throws: ``StashError`` with code ``StashError/Code/invalidArgument`` when the value
    ///   cannot be written as a property list (for example a bare `Int` or `String` at the top
    ///   level, or a `nil` inside a collection).
    public func encode(_ value: Value) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        do {
            return try encoder.encode(value)
        } catch {
            throw StashError(
                .invalidArgument,
                "Cannot encode a \(Value.self) as a property list; property lists need an array or dictionary at "
                    + "the top level: wrap the value in a struct, or use JSONCodec.",
                cause: error)
        }
    }

    /// Decodes a value from a property list in any format (binary, XML or OpenStep).
    ///
    /// - Parameter data: The property list.
    /// - Returns: The value.
    /// - Throws: ``StashError`` with code ``StashError/Code/decodingFailed`` when `data` is not
    ///   a property list for a `Value`.
    public func decode(_ data: Data) throws -> Value {
        do {
            return try PropertyListDecoder().decode(Value.self, from: data)
        } catch {
            throw StashError(
                .decodingFailed,
                "The \(data.count) stored bytes are not a property list for a \(Value.self); the entry was probably "
                    + "written by another version of the type: remove it or store it again.",
                cause: error)
        }
    }
}
