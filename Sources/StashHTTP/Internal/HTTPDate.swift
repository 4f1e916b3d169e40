import Foundation

/// Parses the three HTTP-date formats that RFC 9110 §5.6.7 requires a recipient to accept.
///
/// Hand-written rather than a `DateFormatter`, which is neither `Sendable` nor cheap to make,
/// and whose parsing differs between Foundation implementations. Lenient where senders are
/// known to stray without ambiguity: names in any case, `UTC` for `GMT`, a missing comma,
/// repeated spaces, dashes in the IMF date, `.` in the time, one-digit hours and two-digit
/// years (00-69 are 20xx).
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
    /// (RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime); `nil` for anything else.
    static func parse(_ text: String) -> Date? {
        var fields = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map { $0.lowercased() }
        if fields.count == 4, fields[1].contains("-") {
            // RFC 850 (or an IMF date with dashes): "06-nov-94".
            let parts = fields[1].split(separator: "-").map(String.init)
            guard parts.count == 3 else { return nil }
            fields = [fields[0]] + parts + [fields[2], fields[3]]
        }
        switch fields.count {
        case 6 where fields[5] == "gmt" || fields[5] == "utc":
            return make(year: fields[3], month: fields[2], day: fields[1], time: fields[4])
        case 5 where Int(fields[4]) != nil:
            return make(year: fields[4], month: fields[1], day: fields[2], time: fields[3])
        default:
            return nil
        }
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

    private static func make(year yearText: String, month: String, day dayText: String, time: String) -> Date? {
        let clock = time.split(whereSeparator: { $0 == ":" || $0 == "." }).map { Int($0) }
        guard var year = Int(yearText), let day = Int(dayText),
            let monthIndex = months.firstIndex(of: String(month.prefix(3))), clock.count == 3,
            let hour = clock[0], let minute = clock[1], let second = clock[2],
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        if yearText.count == 2 { year += year < 70 ? 2000 : 1900 }
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
