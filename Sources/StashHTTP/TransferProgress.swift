/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes received so far.
    public var bytesReceived: Int
    /// The body's length, when the server announced it (`Content-Length`, without a
    /// `Content-Encoding` that changes it).
    public var bytesExpected: Int?

    /// Creates a progress value.
    public init(bytesReceived: Int, bytesExpected: Int?) {
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
    }

    /// The fraction received, from 0 to 1, when the length is known.
    public var fractionCompleted: Double? {
        guard let bytesExpected else { return nil }
        return bytesExpected == 0 ? 1 : Double(bytesReceived) / Double(bytesExpected)
    }
}
