import Foundation

/// Parses the three HTTP-date formats that RFC 9110 §5.6.7 requires a recipient to accept.
///
/// Hand-written rather than a `DateFormatter`, which is neither `Sendable` nor cheap to make,
/// and whose parsing differs between Foundation implementations.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Parses `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate), `Sunday, 06-Nov-94 08:49:37 GMT`
    /// (RFC 850) or `Sun Nov  6 08:49:37 1994` (asctime); `nil` for anything else.
    static func parse(_ text: String) -> Date? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        switch fields.count {
        case 6 where fields[5] == "GMT":
            return make(year: Int(fields[3]), month: fields[2], day: Int(fields[1]), time: fields[4])
        case 4 where fields[3] == "GMT":
            let parts = fields[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let shortYear = Int(parts[2]) else { return nil }
            let year = parts[2].count == 2 ? (shortYear < 70 ? 2000 + shortYear : 1900 + shortYear) : shortYear
            return make(year: year, month: parts[1], day: Int(parts[0]), time: fields[2])
        case 5:
            return make(year: Int(fields[4]), month: fields[1], day: Int(fields[2]), time: fields[3])
        default:
            return nil
        }
    }

    private static func make(year: Int?, month: String, day: Int?, time: String) -> Date? {
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard let year, let day, let monthIndex = months.firstIndex(of: month.lowercased()), clock.count == 3,
            (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
            (0...60).contains(clock[2])
        else { return nil }
        let days = daysSinceEpoch(year: year, month: monthIndex + 1, day: day)
        let seconds = days * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
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
}
