#if Serve
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// The request the proxy sends to the origin for a client's request.
    enum OriginRequest {
        /// A request for the origin: its target relative to the origin's URL, its fields, and the
        /// client's content streamed through.
        struct Message: Sendable {
            var method: HTTPMethod
            /// The path and query, starting with `/`, appended to the origin's path.
            var target: String
            var headers: HTTPHeaders
            /// The client's content, if any.
            var body: RequestBody?
            /// The content's length, when the client announced it.
            var bodyLength: Int64? {
                headers.first(name: "content-length").flatMap { Int64($0) }
            }
        }

        /// The client's request as the origin gets it: end-to-end fields only (RFC 9110 §7.6.1), the
        /// proxy's `Via` (§7.6.3) and forwarding fields (RFC 7239, see
        /// ``ProxyHeaders/setForwarding(_:client:requestHost:options:)``), and, to revalidate
        /// `stored`, the proxy's own validators in place of the client's (RFC 9111 §4.3.1).
        ///
        /// - Parameter wholeResponse: Leaves out `Range` and `If-Range`, to fetch the whole
        ///   response that a range is then cut from (RFC 9111 §3.4).
        static func make(
            head: HTTPRequestHead, client: String, stored: CachedResponse?, context: ProxyContext,
            wholeResponse: Bool = false
        ) -> Message {
            // NIO spells M-SEARCH without its hyphen on the wire.
            var request = Message(
                method: head.method == .MSEARCH ? .RAW(value: "M-SEARCH") : head.method,
                target: head.uri.hasPrefix("/") ? head.uri : "/" + head.uri,
                headers: ProxyHeaders.endToEnd(head.headers, excluding: ["host"]))
            ProxyHeaders.setForwarding(
                &request.headers, client: client, requestHost: head.headers.first(name: "host"),
                options: context.options)
            ProxyHeaders.addVia(to: &request.headers, version: head.version)
            if wholeResponse {
                request.headers.remove(name: "range")
                request.headers.remove(name: "if-range")
            }
            if let stored {
                request.headers.remove(name: "if-none-match")
                request.headers.remove(name: "if-modified-since")
                if let etag = stored.headers.first(name: "etag") {
                    request.headers.add(name: "If-None-Match", value: etag)
                }
                if let modified = stored.headers.first(name: "last-modified") {
                    request.headers.add(name: "If-Modified-Since", value: modified)
                }
            }
            return request
        }

        /// Whether the request carries a `100-continue` expectation that the proxy must honour:
        /// from HTTP/1.1 or later only (RFC 9110 §10.1.1: ignored in an HTTP/1.0 request).
        static func expectsContinue(_ head: HTTPRequestHead) -> Bool {
            guard head.version.major > 1 || head.version.minor >= 1 else { return false }
            return head.headers[canonicalForm: "expect"].contains { $0.lowercased() == "100-continue" }
        }

        /// Whether a failure means the origin did not send its response head in time (a `504`).
        static func isTimeout(_ error: any Error) -> Bool {
            (error as? HTTPClientError) == .deadlineExceeded || (error as? OriginClientError) == .deadlineExceeded
        }

        /// Whether a failure to get a response means the origin is unreachable or hung up (refused,
        /// reset or closed), as opposed to a response that took too long.
        static func isDisconnection(_ error: any Error) -> Bool {
            if let error = error as? HTTPClientError, error == .deadlineExceeded || error == .cancelled {
                return false
            }
            if let error = error as? OriginClientError, error == .deadlineExceeded || error == .shutDown {
                return false
            }
            if error is ServeFailure { return false }  // the origin answered, wrongly
            return !(error is CancellationError)
        }
    }
#endif
