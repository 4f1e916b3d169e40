#if Tool
    import Foundation
    import Stash

    /// How `stash` formats what it prints: JSON documents, sizes, durations and aligned columns.
    enum Output {
        /// Prints `value` as one pretty-printed JSON document with sorted keys and ISO 8601 dates.
        static func printJSON(_ value: some Encodable) throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            Terminal.writeOutput(try encoder.encode(value) + Data("\n".utf8))
        }

        /// `1.2 MB`, `320 B`.
        static func size(_ bytes: Int) -> String { ByteCount(bytes).description }

        /// A duration in milliseconds, as printed (`0.4 ms`, `35.2 ms`, `1.24 s`).
        static func duration(_ duration: Duration) -> String {
            let milliseconds = milliseconds(duration)
            if milliseconds >= 1000 { return String(format: "%.2f s", milliseconds / 1000) }
            return String(format: "%.1f ms", milliseconds)
        }

        /// A duration as a number of milliseconds.
        static func milliseconds(_ duration: Duration) -> Double {
            let components = duration.components
            return Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        }

        /// A duration as a number of milliseconds, to the microsecond, for JSON.
        static func roundedMilliseconds(_ duration: Duration) -> Double {
            (milliseconds(duration) * 1000).rounded() / 1000
        }

        /// A percentage with no decimals: `67 %`.
        static func percent(_ ratio: Double) -> String { String(format: "%.0f %%", ratio * 100) }

        /// `1 entry`, `2 entries`.
        static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
            "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
        }

        /// Rows of cells as text columns: left-aligned, or right-aligned where `rightAligned` says,
        /// separated by two spaces, without trailing spaces.
        static func table(_ rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
            let columns = rows.map(\.count).max() ?? 0
            let widths = (0..<columns).map { column in
                rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
            }
            return rows.map { row in
                let cells = row.enumerated().map { column, cell in
                    let padding = String(repeating: " ", count: widths[column] - cell.count)
                    return rightAligned.contains(column) ? padding + cell : cell + padding
                }
                var line = cells.joined(separator: "  ")
                while line.hasSuffix(" ") { line.removeLast() }
                return line
            }
        }
    }
#endif
