import Foundation

/// A response as a cache stored it: what ``HTTPCachePolicy`` needs to decide whether it may
/// answer a request.
public struct StoredResponse: Sendable, Hashable {
    /// The method of the request that the response answered: `GET`, or `HEAD`.
    public var method: String
    /// The status code.
    public var status: Int
    /// The header fields as stored (see ``HTTPCachePolicy/storableHeaders(method:requestHeaders:status:responseHeaders:)``).
    public var headers: HTTPFields
    /// When the request was sent (`request_time` of RFC 9111 §4.2.3).
    public var requestTime: Date
    /// When the response was received (`response_time` of RFC 9111 §4.2.3).
    public var responseTime: Date
    /// The request's values of the header fields that the response's `Vary` names (RFC 9111
    /// §4.1); see ``HTTPCachePolicy/varyingRequestHeaders(responseHeaders:requestHeaders:)``.
    public var varyingRequestHeaders: HTTPFields

    /// Creates a stored response.
    public init(
        method: String = "GET", status: Int, headers: HTTPFields, requestTime: Date, responseTime: Date,
        varyingRequestHeaders: HTTPFields = HTTPFields()
    ) {
        self.method = method
        self.status = status
        self.headers = headers
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingRequestHeaders = varyingRequestHeaders
    }
}
