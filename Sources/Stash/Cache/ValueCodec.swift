import Foundation

/// Turns values into bytes for the disk tier and back.
///
/// A ``MemoryCache`` holds decoded values; the disk holds what a codec makes of them. Stash
/// provides ``DataCodec``, ``StringCodec``, ``JSONCodec``, ``PropertyListCodec`` and, on Apple
/// platforms, `ImageCodec`. Write your own for other formats:
///
/// ```swift
/// struct ProtobufCodec<Message: SwiftProtobuf.Message>: ValueCodec {
///     func encode(_ value: Message) throws -> Data { try value.serializedData() }
///     func decode(_ data: Data) throws -> Message { try Message(serializedBytes: data) }
/// }
/// ```
///
/// Decoding must throw, never return a made-up value, when the bytes are not a valid encoding:
/// Stash treats that as a damaged or outdated entry.
public protocol ValueCodec<Value>: Sendable {
    /// The type of the values this codec encodes and decodes.
    associatedtype Value

    /// Encodes a value.
    ///
    /// - Parameter value: The value to encode.
    /// - Returns: The bytes to store.
    /// - Throws: ``StashError`` with code ``StashError/Code/invalidArgument`` when the value
    ///   cannot be represented in this format.
    func encode(_ value: Value) throws -> Data

    /// Decodes a value from bytes that ``encode(_:)`` produced.
    ///
    /// - Parameter data: The stored bytes.
    /// - Returns: The decoded value.
    /// - Throws: ``StashError`` with code ``StashError/Code/decodingFailed`` when the bytes are
    ///   not a valid encoding of a `Value`.
    func decode(_ data: Data) throws -> Value
}

extension ValueCodec where Self == DataCodec {
    /// Stores `Data` as it is.
    public static var data: DataCodec { DataCodec() }
}

extension ValueCodec where Self == StringCodec {
    /// Stores a `String` as UTF-8.
    public static var string: StringCodec { StringCodec() }
}

extension ValueCodec {
    /// Stores a `Codable` value as JSON.
    ///
    /// - Parameter type: The type of the values, such as `Photo.self`.
    /// - Returns: A ``JSONCodec`` with default encoder and decoder settings.
    public static func json<T: Codable>(_ type: T.Type) -> JSONCodec<T> where Self == JSONCodec<T> {
        JSONCodec()
    }

    /// Stores a `Codable` value as a binary property list.
    ///
    /// - Parameter type: The type of the values, such as `Settings.self`.
    /// - Returns: A ``PropertyListCodec``.
    public static func propertyList<T: Codable>(_ type: T.Type) -> PropertyListCodec<T>
    where Self == PropertyListCodec<T> {
        PropertyListCodec()
    }
}
