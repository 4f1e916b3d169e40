#if AsyncHTTPClient
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// An error that `onResponse` or `onData` threw: it reaches the loader unchanged.
    struct CallerFailure: Error {
        var error: any Error
    }

    /// Turns async-http-client's and NIO's errors into the `URLError`s that `URLSession` reports for
    /// the same failures, so that the loader's retry policy and messages do not depend on the transport.
    enum TransportErrors {
        /// The error `send` throws for `error`.
        static func translate(_ error: any Error, url: URL?) -> any Error {
            if let failure = error as? CallerFailure { return failure.error }
            if error is CancellationError || Task.isCancelled { return CancellationError() }
            if error is URLError { return error }
            if let client = error as? HTTPClientError, client == .cancelled { return CancellationError() }
            let (code, description) = classify(error)
            var info: [String: Any] = [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: description]
            if let url { info[NSURLErrorFailingURLErrorKey] = url }
            return URLError(code, userInfo: info)
        }

        /// The `URLError` code and a description for an async-http-client or NIO error.
        static func classify(_ error: any Error) -> (URLError.Code, String) {
            switch error {
            case let client as HTTPClientError:
                return (code(of: client), "async-http-client: \(client.shortDescription)")
            case let connection as NIOConnectionError:
                if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                    return (.cannotFindHost, "Cannot resolve \(connection.host).")
                }
                let causes = connection.connectionErrors.map { "\($0.error)" }.joined(separator: "; ")
                return (.cannotConnectToHost, "Cannot connect to \(connection.host):\(connection.port): \(causes).")
            case let io as IOError:
                switch io.errnoCode {
                case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH:
                    return (.cannotConnectToHost, "Cannot connect: \(io).")
                case ECONNRESET, EPIPE, ECONNABORTED:
                    return (.networkConnectionLost, "The connection was lost: \(io).")
                case ETIMEDOUT:
                    return (.timedOut, "The connection timed out: \(io).")
                default:
                    return (.unknown, "I/O error: \(io).")
                }
            case let channel as ChannelError:
                switch channel {
                case .connectTimeout: return (.timedOut, "The connection timed out.")
                case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                    return (.networkConnectionLost, "The connection was closed: \(channel).")
                default: return (.unknown, "Channel error: \(channel).")
                }
            case let parser as HTTPParserError:
                // A body cut short by the server closing the connection is a lost connection, which
                // a later attempt may not meet; anything else is a malformed response.
                if parser == .invalidEOFState { return (.networkConnectionLost, "The response ended early.") }
                return (.badServerResponse, "Malformed HTTP response: \(parser).")
            default:
                // NIOSSL and NIOHTTPCompression reach this target only through async-http-client; their
                // errors are recognised by their module rather than by depending on two more packages.
                let module = String(reflecting: type(of: error)).prefix { $0 != "." }
                if module == "NIOSSL" { return (.secureConnectionFailed, "TLS failed: \(error).") }
                if module == "NIOHTTPCompression" {
                    return (.cannotDecodeContentData, "Cannot decode the response's Content-Encoding: \(error).")
                }
                return (.unknown, "\(error)")
            }
        }

        private static func code(of error: HTTPClientError) -> URLError.Code {
            switch error {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timedOut
            case .remoteConnectionClosed, .uncleanShutdown:
                return .networkConnectionLost
            case .redirectLimitReached, .redirectCycleDetected:
                return .httpTooManyRedirects
            case .invalidURL, .emptyHost, .emptyScheme:
                return .badURL
            case .alreadyShutdown:
                return .resourceUnavailable
            default:
                if error.shortDescription.lowercased().contains("scheme") { return .unsupportedURL }
                return .badServerResponse
            }
        }
    }
#endif
