#if Tool
    import Foundation
    import Stash

    /// A failure of a `stash` command: the line printed on standard error and the exit status.
    ///
    /// Statuses follow sysexits(3): 1 for a miss, 64 (`EX_USAGE`) for bad usage, 74 (`EX_IOERR`)
    /// for a failed disk or network operation.
    struct CLIError: Error {
        /// A key or entry that is not cached, or damage that `verify` did not repair.
        static let missStatus: Int32 = 1
        /// A bad argument, option or input.
        static let usageStatus: Int32 = 64
        /// A disk or network operation failed.
        static let ioStatus: Int32 = 74

        /// The exit status.
        var status: Int32
        /// What failed and what to do, on one line, without the `stash: ` prefix; empty when the
        /// command has already reported the failure.
        var message: String

        init(status: Int32, _ message: String) {
            self.status = status
            self.message = message.oneLine
        }

        /// A miss: exit status 1.
        static func miss(_ message: String) -> CLIError { CLIError(status: missStatus, message) }
        /// Bad usage: exit status 64.
        static func usage(_ message: String) -> CLIError { CLIError(status: usageStatus, message) }
        /// An I/O failure: exit status 74.
        static func io(_ message: String) -> CLIError { CLIError(status: ioStatus, message) }

        /// The CLI error for any error thrown while doing `activity` (such as "reading 'key'").
        ///
        /// A ``StashError`` keeps its message, which already names the key, path or URL and the
        /// remedy; bad input maps to 64 and everything else to 74.
        init(_ error: any Error, while activity: String) {
            switch error {
            case let error as CLIError:
                self = error
            case let error as StashError:
                let status: Int32
                switch error.code {
                case .invalidArgument, .invalidKey, .tooLarge: status = Self.usageStatus
                default: status = Self.ioStatus
                }
                var message = error.message
                // System-call causes are short and say what the OS refused; others are already in the message.
                if let cause = error.cause as? Stash.POSIXErrorCode { message += " (\(cause))" }
                self.init(status: status, message)
            default:
                self.init(
                    status: Self.ioStatus, "\(activity.prefix(1).uppercased())\(activity.dropFirst()) failed: \(error)."
                )
            }
        }
    }

    extension String {
        /// The text on one line: line breaks become spaces, surrounding white space goes.
        var oneLine: String {
            split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.joined(separator: " ")
        }
    }
#endif
