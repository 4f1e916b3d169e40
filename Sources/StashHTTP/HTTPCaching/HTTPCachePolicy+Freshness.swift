import Foundation

extension HTTPCachePolicy {
    // MARK: - Freshness (§4.2)

    /// How long a response stays fresh from its origin (`freshness_lifetime`, §4.2.1).
    ///
    /// The first that applies: for a shared cache `s-maxage` (§5.2.2.10); `max-age`
    /// (§5.2.2.1); `Expires` minus `Date` (§5.3), an `Expires` that is not exactly one of the
    /// three HTTP-date formats of RFC 9110 §5.6.7 (such as `0`, or a date in `UTC`), or that
    /// is given on several lines, being already expired; then, only for a heuristically cacheable status or a `public` response,
    /// ``heuristicFraction`` of the time since `Last-Modified`, at most
    /// ``maxHeuristicFreshness`` (§4.2.2); otherwise zero. A directive given twice counts by its
    /// first occurrence, a malformed one as zero (§4.2.1). A valid field of ``targetedFields``
    /// replaces `Cache-Control`, and `Expires` is then ignored (RFC 9213 §2.2).
    ///
    /// - Parameters:
    ///   - status: The response status.
    ///   - responseHeaders: The response's header fields.
    ///   - responseTime: When the response was received, standing in for a missing or invalid
    ///     `Date` (RFC 9110 §6.6.1); `nil` makes `Expires` and `Last-Modified` without `Date`
    ///     give zero.
    /// - Returns: The lifetime, never negative.
    /// - Complexity: O(*n*) in the header fields' length.
    public func freshnessLifetime(status: Int, responseHeaders: HTTPFields, responseTime: Date? = nil) -> Duration {
        freshnessLifetime(
            status: status, responseHeaders: responseHeaders, directives: responseDirectives(responseHeaders),
            date: Self.date(responseHeaders) ?? responseTime)
    }

    /// ``freshnessLifetime(status:responseHeaders:responseTime:)`` with the directives and the
    /// date already parsed.
    func freshnessLifetime(status: Int, responseHeaders: HTTPFields, directives: ResponseDirectives, date: Date?)
        -> Duration
    {
        let control = directives.control
        if kind == .shared, let sharedMaxAge = control.sharedMaxAge { return sharedMaxAge }
        if let maxAge = control.maxAge { return maxAge }
        let expires = directives.isTargeted ? [] : responseHeaders.values(for: "Expires")
        if !expires.isEmpty {
            guard expires.count == 1, let expiry = HTTPDate.parseStrict(expires[0]), let date else { return .zero }
            return Self.duration(expiry.timeIntervalSince(date))
        }
        guard Self.heuristicallyCacheableStatuses.contains(status) || control.isPublic,
            let modified = responseHeaders.values(for: "Last-Modified").first.flatMap(HTTPDate.parse), let date
        else { return .zero }
        let heuristic = Self.duration(date.timeIntervalSince(modified) * heuristicFraction)
        return min(heuristic, maxHeuristicFreshness)
    }

    /// The freshness lifetime of a stored response, its response time standing in for a missing
    /// `Date`.
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public func freshnessLifetime(of stored: StoredResponse) -> Duration {
        freshnessLifetime(status: stored.status, responseHeaders: stored.headers, responseTime: stored.responseTime)
    }

    /// How old a response is at `now` (`current_age`, §4.2.3), counting the `Age` it arrived with,
    /// the apparent age from its `Date`, the request's round trip and the time since it arrived.
    ///
    /// `Age` counts by the first member of its lines (`7200, 0` and the lines `7200`, `0` are
    /// 7200 seconds, §5.1); a first member that is not `1*DIGIT` (`abc`, `-1`, `7.5`) makes
    /// the field ignored, as §5.1 says; one too large is 2³¹ seconds (§1.2.2).
    ///
    /// - Parameters:
    ///   - responseHeaders: The stored response's header fields.
    ///   - requestTime: When the request that fetched (or last validated) it was sent.
    ///   - responseTime: When the response arrived.
    ///   - now: The present.
    /// - Returns: The age, never negative, at most 2³¹ seconds.
    /// - Complexity: O(*n*) in the header fields' length.
    public func currentAge(responseHeaders: HTTPFields, requestTime: Date, responseTime: Date, now: Date) -> Duration {
        currentAge(
            responseHeaders: responseHeaders, date: Self.date(responseHeaders), requestTime: requestTime,
            responseTime: responseTime, now: now)
    }

    /// ``currentAge(responseHeaders:requestTime:responseTime:now:)`` with the `Date` already parsed.
    func currentAge(responseHeaders: HTTPFields, date: Date?, requestTime: Date, responseTime: Date, now: Date)
        -> Duration
    {
        let ageValue = TimeInterval(Self.ageValue(responseHeaders) ?? 0)
        let dateValue = date ?? responseTime
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        let residentTime = max(0, now.timeIntervalSince(responseTime))
        return Self.duration(correctedInitialAge + residentTime)
    }

    /// The current age of a stored response at `now` (§4.2.3).
    ///
    /// - Complexity: O(*n*) in the header fields' length.
    public func currentAge(of stored: StoredResponse, now: Date) -> Duration {
        currentAge(
            responseHeaders: stored.headers, requestTime: stored.requestTime, responseTime: stored.responseTime,
            now: now)
    }

    /// The value of the `Age` header field for `age` (§5.1): whole seconds, at most 2³¹.
    ///
    /// - Complexity: O(1).
    public static func ageHeaderValue(_ age: Duration) -> String {
        String(Int(min(max(0, age.timeInterval), TimeInterval(HTTPCacheControl.maximumDeltaSeconds))))
    }

    /// The seconds of `Age` (§5.1): the first member of the first line, at most 2³¹; `nil` when
    /// absent or when that member is not a non-negative integer.
    static func ageValue(_ headers: HTTPFields) -> Int? {
        guard let line = headers.values(for: "Age").first,
            let first = line.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first
        else { return nil }
        return HTTPCacheControl.deltaSeconds(first.trimmingHTTPWhitespace)
    }

    /// The first valid `Date` of `headers`.
    static func date(_ headers: HTTPFields) -> Date? {
        headers.values(for: "Date").first.flatMap(HTTPDate.parse)
    }

    /// Seconds as a non-negative duration, at most 2³¹ seconds (§1.2.2).
    static func duration(_ seconds: TimeInterval) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        return .milliseconds(Int64(min(seconds, TimeInterval(HTTPCacheControl.maximumDeltaSeconds)) * 1000))
    }
}

extension HTTPCachePolicy {
    /// Formats `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form a `Date`
    /// header field must take (RFC 9110 §5.6.7).
    ///
    /// - Complexity: O(1).
    public static func httpDate(_ date: Date) -> String {
        HTTPDate.format(date)
    }

    /// Parses an HTTP date in any of the three formats of RFC 9110 §5.6.7 (and the common
    /// variants that are not ambiguous: any case, `UTC`, two-digit years); `nil` when invalid.
    ///
    /// - Complexity: O(*n*) in the text's length.
    public static func parseHTTPDate(_ text: String) -> Date? {
        HTTPDate.parse(text)
    }
}
