import Foundation

/// Parses the three HTTP-date formats that RFC 9110 §5.6.7 requires a recipient to accept.
///
/// Hand-written rather than a `DateFormatter`, which is neither `Sendable` nor cheap to make,
/// and whose parsing differs between Foundation implementations. Two entry points:
/// ``parseStrict(_:)`` follows the grammar exactly (only the names' case may vary), for
/// `Expires`, where a date that is not an HTTP-date means "already expired" (RFC 9111 §5.3);
/// ``parse(_:)`` is lenient where senders are known to stray without ambiguity, for `Date`,
/// `Last-Modified` and `Retry-After`, where a rejected date would only lose information.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Parses exactly `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
    /// (obsolete RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime), RFC 9110 §5.6.7; `nil` for
    /// anything else: another zone (`UTC`), a two-digit year or dashes in the IMF form, a
    /// missing comma, extra spaces, `.` in the time, a one-digit hour, an impossible date.
    ///
    /// Day names, month names and `GMT` may be in any case. A two-digit RFC 850 year 00-69 is
    /// 20xx, 70-99 is 19xx.
    static func parseStrict(_ text: String) -> Date? {
        var cursor = Cursor(bytes: Array(text.utf8))
        guard let name = cursor.letters() else { return nil }
        if name.count == 3, dayNames.contains(name), cursor.skip(0x2C) {
            // IMF-fixdate: day-name "," SP date1 SP time-of-day SP GMT
            guard cursor.skip(0x20), let day = cursor.digits(2), cursor.skip(0x20), let month = cursor.month(),
                cursor.skip(0x20), let year = cursor.digits(4), cursor.skip(0x20), let time = cursor.timeOfDay(),
                cursor.skip(0x20), cursor.letters() == "gmt", cursor.isAtEnd
            else { return nil }
            return date(year: year, month: month, day: day, time: time)
        }
        if longDayNames.contains(name), cursor.skip(0x2C) {
            // rfc850-date: day-name-l "," SP date2 SP time-of-day SP GMT, date2 = day "-" month "-" 2DIGIT
            guard cursor.skip(0x20), let day = cursor.digits(2), cursor.skip(0x2D), let month = cursor.month(),
                cursor.skip(0x2D), let year = cursor.digits(2), cursor.skip(0x20), let time = cursor.timeOfDay(),
                cursor.skip(0x20), cursor.letters() == "gmt", cursor.isAtEnd
            else { return nil }
            return date(year: year + (year < 70 ? 2000 : 1900), month: month, day: day, time: time)
        }
        // asctime-date: day-name SP date3 SP time-of-day SP year, date3 = month SP ( 2DIGIT / ( SP DIGIT ) )
        guard name.count == 3, dayNames.contains(name), cursor.skip(0x20), let month = cursor.month(),
            cursor.skip(0x20), let day = cursor.skip(0x20) ? cursor.digits(1) : cursor.digits(2), cursor.skip(0x20),
            let time = cursor.timeOfDay(), cursor.skip(0x20), let year = cursor.digits(4), cursor.isAtEnd
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// The instant of a validated calendar date and time of day; `nil` for an impossible one
    /// (`31 Feb`, `24:00:00`).
    private static func date(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        guard (1...31).contains(day), (0...23).contains(time.hour), (0...59).contains(time.minute),
            (0...60).contains(time.second)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard civil(fromDays: days) == (year, month, day) else { return nil }
        let seconds = days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// A reader over the bytes of a date, for ``parseStrict(_:)``.
    private struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        /// Consumes `byte` if it is next.
        mutating func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Exactly `count` digits as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }

        /// A run of ASCII letters, lowercased; `nil` when there is none.
        mutating func letters() -> String? {
            let start = index
            while index < bytes.count, (bytes[index] | 0x20) >= 0x61, (bytes[index] | 0x20) <= 0x7A { index += 1 }
            guard index > start else { return nil }
            return String(decoding: bytes[start..<index].map { $0 | 0x20 }, as: UTF8.self)
        }

        /// A three-letter month name, as 1...12.
        mutating func month() -> Int? {
            let start = index
            guard let name = letters(), index - start == 3, let month = HTTPDate.months.firstIndex(of: name) else {
                return nil
            }
            return month + 1
        }

        /// `2DIGIT ":" 2DIGIT ":" 2DIGIT`.
        mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
            guard let hour = digits(2), skip(0x3A), let minute = digits(2), skip(0x3A), let second = digits(2) else {
                return nil
            }
            return (hour, minute, second)
        }
    }

    /// Parses an HTTP-date like ``parseStrict(_:)``, and also the variants senders are known to
    /// produce without ambiguity: `UTC` for `GMT`, a missing comma, repeated spaces, dashes in
    /// the IMF date, `.` in the time, one-digit hours and two-digit years (00-69 are 20xx);
    /// `nil` for anything else.
    ///
    /// Works on the UTF-8 bytes: it runs for every cache decision.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int?
        for index in bytes.indices {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x2C || byte == 0x09 {
                if let first = start { tokens.append(bytes[first..<index]) }
                start = nil
            } else if start == nil {
                start = index
            }
        }
        if let first = start { tokens.append(bytes[first...]) }
        if tokens.count == 4, tokens[1].contains(0x2D) {
            // RFC 850 (or an IMF date with dashes): "06-Nov-94".
            let parts = tokens[1].split(separator: 0x2D)
            guard parts.count == 3 else { return nil }
            tokens = [tokens[0]] + parts + [tokens[2], tokens[3]]
        }
        switch tokens.count {
        case 6 where isZone(tokens[5]):
            return make(year: tokens[3], month: tokens[2], day: tokens[1], time: tokens[4])
        case 5 where number(tokens[4]) != nil:
            return make(year: tokens[4], month: tokens[1], day: tokens[2], time: tokens[3])
        default:
            return nil
        }
    }

    /// `GMT` or `UTC`, in any case.
    private static func isZone(_ token: ArraySlice<UInt8>) -> Bool {
        let lower = token.map { $0 | 0x20 }
        return lower == Array("gmt".utf8) || lower == Array("utc".utf8)
    }

    /// A number of 1 to 9 digits.
    private static func number(_ token: ArraySlice<UInt8>) -> Int? {
        guard !token.isEmpty, token.count <= 9 else { return nil }
        var value = 0
        for byte in token {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Formats `date` as an IMF-fixdate, the form senders must use (RFC 9110 §5.6.7).
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let clock = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let monthName = months[month - 1].capitalized
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(weekday), \(two(day)) \(monthName) \(year) \(two(clock / 3600)):\(two(clock / 60 % 60)):\(two(clock % 60)) GMT"
    }

    private static func make(
        year yearToken: ArraySlice<UInt8>, month: ArraySlice<UInt8>, day dayToken: ArraySlice<UInt8>,
        time: ArraySlice<UInt8>
    ) -> Date? {
        let clock = time.split(whereSeparator: { $0 == 0x3A || $0 == 0x2E }).map(number)
        let monthName = String(decoding: month.prefix(3).map { $0 | 0x20 }, as: UTF8.self)
        guard var year = number(yearToken), let day = number(dayToken), month.count >= 3,
            let monthIndex = months.firstIndex(of: monthName), clock.count == 3,
            let hour = clock[0], let minute = clock[1], let second = clock[2],
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        if yearToken.count == 2 { year += year < 70 ? 2000 : 1900 }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
