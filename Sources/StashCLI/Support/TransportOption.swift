#if Tool
    import ArgumentParser
    import StashAsyncHTTPClient
    import StashHTTP

    /// `--transport urlsession|async-http-client`: what sends the HTTP requests of `fetch`.
    struct TransportOptions: ParsableArguments {
        /// The HTTP client a command uses.
        enum Transport: String, ExpressibleByArgument, CaseIterable, Sendable {
            /// Foundation's `URLSession` (libcurl through FoundationNetworking on Linux).
            case urlSession = "urlsession"
            /// async-http-client, on SwiftNIO.
            case asyncHTTPClient = "async-http-client"

            /// async-http-client on Linux, where `URLSession` is a libcurl wrapper with quirks of its
            /// own; `URLSession` on Apple platforms, where it is the system's client.
            static var platformDefault: Transport {
                #if canImport(FoundationNetworking)
                    .asyncHTTPClient
                #else
                    .urlSession
                #endif
            }

            /// A new transport of this kind.
            func make() -> any HTTPTransport {
                switch self {
                case .urlSession: URLSessionTransport()
                case .asyncHTTPClient: AsyncHTTPClientTransport()
                }
            }
        }

        @Option(
            help: ArgumentHelp(
                "The HTTP client: urlsession or async-http-client (the default on Linux; urlsession elsewhere).",
                valueName: "client"))
        var transport: Transport = .platformDefault
    }
#endif
