import Foundation

/// A number of bytes, written the way people think of sizes: `.megabytes(10)`.
///
/// Decimal units (`kilobytes`, `megabytes`, `gigabytes`) are powers of 1000, as storage
/// vendors and the `stash` tool's `10MB` use them; binary units (`kibibytes`, `mebibytes`,
/// `gibibytes`) are powers of 1024.
public struct ByteCount: Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The number of bytes.
    public var bytes: Int

    /// Creates a byte count.
    public init(_ bytes: Int) { self.bytes = bytes }

    /// Creates a byte count from an integer literal, in bytes.
    public init(integerLiteral value: Int) { self.bytes = value }

    /// `n` bytes.
    public static func bytes(_ n: Int) -> ByteCount { ByteCount(n) }
    /// `n` × 1000 bytes.
    public static func kilobytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1e3)) }
    /// `n` × 1000² bytes.
    public static func megabytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1e6)) }
    /// `n` × 1000³ bytes.
    public static func gigabytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1e9)) }
    /// `n` × 1024 bytes.
    public static func kibibytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1024)) }
    /// `n` × 1024² bytes.
    public static func mebibytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1_048_576)) }
    /// `n` × 1024³ bytes.
    public static func gibibytes(_ n: Double) -> ByteCount { ByteCount(Int(n * 1_073_741_824)) }

    /// Zero bytes.
    public static let zero = ByteCount(0)

    /// Orders byte counts by size.
    public static func < (lhs: ByteCount, rhs: ByteCount) -> Bool { lhs.bytes < rhs.bytes }

    /// A short human form with one decimal: `1.5 MB`, `320 B`.
    public var description: String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        return String(format: "%.1f %@", value, units[unit])
    }

    /// Parses sizes such as `10MB`, `512 KiB`, `1.5G`, `4096` (bytes).
    ///
    /// Units are case-insensitive: `B`, `K`/`KB`, `M`/`MB`, `G`/`GB`, `T`/`TB` are decimal,
    /// `KiB`, `MiB`, `GiB`, `TiB` binary.
    ///
    /// - Throws: ``StashError`` with code ``StashError/Code/invalidArgument`` when the text
    ///   is not a non-negative number followed by a known unit.
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let numberPart = trimmed.prefix { $0.isNumber || $0 == "." }
        let unitPart = trimmed.dropFirst(numberPart.count).trimmingCharacters(in: .whitespaces).lowercased()
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
            "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
        ]
        guard let number = Double(numberPart), number.isFinite, let multiplier = multipliers[unitPart],
            number * multiplier < Double(Int.max)
        else {
            throw StashError(
                .invalidArgument,
                "Invalid size '\(text)': write a number followed by a unit, such as 500KB, 10MB, 1.5GB or 64MiB."
            )
        }
        self.bytes = Int(number * multiplier)
    }
}
