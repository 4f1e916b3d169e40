import Foundation

/// A codec that stores `Codable` values as JSON.
public struct JSONCodec<Value: Codable>: ValueCodec {
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder

    /// Creates the codec.
    ///
    /// - Parameters:
    ///   - encoder: The encoder to use, configured as you like; do not change it afterwards.
    ///     Defaults to a `JSONEncoder()` with default settings.
    ///   - decoder: The decoder to use; do not change it afterwards. Defaults to a
    ///     `JSONDecoder()` with default settings.
    public init(encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder()) {
        self.encoder = encoder
        self.decoder = decoder
    }

    /// Encodes a value as JSON.
    ///
    /// - Parameter value: The value.
    /// - Returns: Its JSON text, as UTF-8.
    /// - Throws: ``StashError`` with code ``StashError/Code/invalidArgument`` when the value
    ///   cannot be written as JSON (a non-finite floating-point number, for example).
    public func encode(_ value: Value) throws -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            throw StashError(
                .invalidArgument,
                "Cannot encode a \(Value.self) as JSON; make its Encodable conformance produce only JSON values "
                    + "(no NaN or infinity), or use another codec.",
                cause: error)
        }
    }

    /// Decodes a value from JSON.
    ///
    /// - Parameter data: JSON text, as UTF-8.
    /// - Returns: The value.
    /// - Throws: ``StashError`` with code ``StashError/Code/decodingFailed`` when `data` is not
    ///   JSON for a `Value`.
    public func decode(_ data: Data) throws -> Value {
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw StashError(
                .decodingFailed,
                "The \(data.count) stored bytes are not JSON for a \(Value.self); the entry was probably written by "
                    + "another version of the type: remove it or store it again.",
                cause: error)
        }
    }
}
