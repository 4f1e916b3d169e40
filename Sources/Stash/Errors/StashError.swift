import Foundation

/// The one error type that Stash throws.
///
/// Every error carries a ``Code`` that a caller can match on, a ``message`` that says what
/// failed, names the key, path or URL involved and suggests a remedy, and the underlying
/// ``cause`` (an errno, an SQLite result code, a `URLError`, …) when there is one.
///
/// A cache miss is never an error: lookups return `nil`.
public struct StashError: Error, Sendable, CustomStringConvertible {
    /// A stable, matchable category of failure.
    ///
    /// New codes may be added in later versions without breaking existing `switch`es,
    /// because `Code` is a struct rather than an enum.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case io, notFound, invalidKey, invalidArgument, tooLarge, corrupt
            case invalidResponse, transport, busy, readOnly, cancelled, decodingFailed
            case diskFull, unsupportedVersion
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A file-system or database operation failed.
        public static let io = Code(.io)
        /// Something that must exist (a file to import, a directory) does not.
        public static let notFound = Code(.notFound)
        /// A key is not acceptable (for example, the empty string).
        public static let invalidKey = Code(.invalidKey)
        /// An argument is out of range (a limit of zero, a negative size, …).
        public static let invalidArgument = Code(.invalidArgument)
        /// A value is larger than the cache or a configured maximum allows.
        public static let tooLarge = Code(.tooLarge)
        /// Stored data or the index failed an integrity check.
        public static let corrupt = Code(.corrupt)
        /// A server answered with a status or body that cannot be cached.
        public static let invalidResponse = Code(.invalidResponse)
        /// A network transfer failed (timeout, connection reset, DNS, …).
        public static let transport = Code(.transport)
        /// The index stayed locked by another connection or process for too long.
        public static let busy = Code(.busy)
        /// The cache directory or database cannot be written.
        public static let readOnly = Code(.readOnly)
        /// The disk holding the cache is full and nothing more can be evicted to make room.
        public static let diskFull = Code(.diskFull)
        /// The cache was written by a newer version of Stash, whose format this one cannot read.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Stored bytes could not be decoded into the requested value type.
        public static let decodingFailed = Code(.decodingFailed)

        /// The code's name, such as `tooLarge`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What failed, naming the key, path or URL involved, and what to do about it.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - message: A sentence naming what failed and the remedy.
    ///   - cause: The underlying error, if any.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// A one-line description: `[code] message (cause: …)`.
    public var description: String {
        if let cause {
            return "[\(code)] \(message) (cause: \(cause))"
        }
        return "[\(code)] \(message)"
    }
}

/// An `errno` value captured from a failed system call, with the call that failed.
public struct POSIXErrorCode: Error, Sendable, CustomStringConvertible {
    /// The system call or library function that failed, such as `rename`.
    public var operation: String
    /// The `errno` value.
    public var errno: Int32

    /// Creates a record of a failed system call.
    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// `rename: No such file or directory (errno 2)`.
    public var description: String {
        "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
