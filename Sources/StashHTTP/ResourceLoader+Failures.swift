import Foundation
import Stash

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ResourceLoader {
    /// URL errors that a later attempt may not meet.
    ///
    /// On Linux, FoundationNetworking reports many libcurl failures (a body cut short, a reset connection) as
    /// `.unknown`.
    private static let transientURLErrors: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .cannotConnectToHost, .notConnectedToInternet, .dnsLookupFailed,
        .unknown,
    ]

    /// Statuses that a later attempt may not meet.
    static func isTransient(status: Int) -> Bool {
        status == 408 || status == 429 || ((500..<600).contains(status) && status != 501 && status != 505)
    }

    /// The error of a transfer that did not complete: cancellation stays cancellation, the
    /// receiver's own errors pass through, and transport errors become `StashError`s.
    func transportFailure(_ error: any Error, url: URL) -> any Error {
        if error is CancellationError || Task.isCancelled { return CancellationError() }
        if let error = error as? StashError { return error }
        let description = (error as NSError).localizedDescription
        let code = (error as? URLError)?.code
        let detail = code.map { "\(description) (URLError \($0.rawValue))" } ?? description
        let stashError = StashError(
            .transport,
            "GET \(url.absoluteString) failed: \(detail); nothing was cached and any cached copy is unchanged. Check the network and the server.",
            cause: error)
        let isReset = (error as? POSIXError)?.code == .ECONNRESET
        if isReset || code.map(Self.transientURLErrors.contains) == true {
            return TransientFailure(error: stashError)
        }
        return stashError
    }

    /// The error of an unacceptable status: retryable ones wrapped for another attempt.
    func statusFailure(_ response: HTTPURLResponse, url: URL) -> any Error {
        let status = response.statusCode
        let phrase = HTTPURLResponse.localizedString(forStatusCode: status).capitalized
        let remedy: String
        let code: StashError.Code
        switch status {
        case 404, 410:
            (code, remedy) = (.notFound, "Check the URL.")
        case 206:
            (code, remedy) = (.invalidResponse, "Remove the Range header from the request.")
        case 400..<500:
            (code, remedy) = (.invalidResponse, "Check the URL, headers and credentials.")
        default:
            (code, remedy) = (.invalidResponse, "Try again later, or check the server.")
        }
        let error = StashError(
            code,
            "GET \(url.absoluteString) answered \(status) \(phrase); nothing was cached and any cached copy is unchanged. \(remedy)",
            cause: HTTPStatusError(statusCode: status, url: response.url ?? url))
        guard Self.isTransient(status: status) else { return error }
        return TransientFailure(error: error, retryAfter: retryAfter(response))
    }

    /// A `Retry-After` of seconds or an HTTP date, as a delay from now.
    private func retryAfter(_ response: HTTPURLResponse) -> Duration? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces)
        else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(configuration.clock())))
    }
}
