import Foundation

/// A cache key that compares and hashes the UTF-8 bytes of a string, exactly as ``DiskCache``
/// stores keys.
///
/// Swift's `String` treats canonically equivalent spellings as equal: `"café"` with a
/// precomposed `é` (NFC) and with `e` plus a combining accent (NFD) are `==` and hash alike. A
/// ``DiskCache`` compares keys byte for byte, so to it they are two entries. ``Cache`` keys its
/// memory tier by `CacheKey` so that both tiers agree on what counts as the same key.
///
/// ```swift
/// let composed = CacheKey("caf\u{E9}")
/// let decomposed = CacheKey("cafe\u{301}")
/// composed == decomposed  // false, although the strings are ==
/// ```
public struct CacheKey: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The key, verbatim.
    public let string: String

    /// Wraps a key; the string is kept exactly as given, without normalisation.
    ///
    /// - Parameter string: The key.
    public init(_ string: String) {
        self.string = string
    }

    /// Wraps a string literal.
    ///
    /// - Parameter value: The literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The key itself.
    public var description: String { string }

    /// Whether two keys have the same UTF-8 bytes.
    ///
    /// - Complexity: O(*n*) in the length of the keys.
    @inlinable
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        let lhs = lhs.string.utf8
        let rhs = rhs.string.utf8
        guard lhs.count == rhs.count else { return false }
        // Native strings hand out their bytes directly; comparing buffers is several times
        // faster than walking two UTF8Views, and every memory hit of a Cache pays for one.
        let contiguous = lhs.withContiguousStorageIfAvailable { lhsBytes in
            rhs.withContiguousStorageIfAvailable { rhsBytes in
                lhsBytes.isEmpty || memcmp(lhsBytes.baseAddress!, rhsBytes.baseAddress!, lhsBytes.count) == 0
            }
        }
        return (contiguous ?? nil) ?? lhs.elementsEqual(rhs)
    }

    /// Feeds the key's UTF-8 bytes, and their count, to `hasher`.
    ///
    /// - Parameter hasher: The hasher.
    /// - Complexity: O(*n*) in the length of the key.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        hasher.combine(utf8.count)
        let hashedContiguously: Void? = utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        if hashedContiguously == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}
