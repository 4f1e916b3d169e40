import Foundation

/// A codec that stores `Data` unchanged.
public struct DataCodec: ValueCodec {
    /// Creates the codec.
    public init() {}

    /// Returns `value` unchanged.
    ///
    /// - Parameter value: The bytes.
    /// - Returns: The same bytes.
    public func encode(_ value: Data) -> Data { value }

    /// Returns `data` unchanged.
    ///
    /// - Parameter data: The bytes.
    /// - Returns: The same bytes.
    public func decode(_ data: Data) -> Data { data }
}
