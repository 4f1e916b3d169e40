#if Tool
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Writing to standard output and standard error, unbuffered, so that text, binary values
    /// and progress lines never interleave out of order.
    enum Terminal {
        /// Whether standard error is a terminal, where progress bars are drawn.
        static var isStandardErrorATerminal: Bool { isatty(STDERR_FILENO) == 1 }

        /// Writes `line` and a newline to standard output.
        static func printLine(_ line: String = "") {
            write(Data((line + "\n").utf8), to: STDOUT_FILENO)
        }

        /// Writes `text` to standard output as it is.
        static func printText(_ text: String) {
            write(Data(text.utf8), to: STDOUT_FILENO)
        }

        /// Writes `data` to standard output.
        static func writeOutput(_ data: Data) {
            write(data, to: STDOUT_FILENO)
        }

        /// Writes `stash: message` on one line to standard error.
        static func printError(_ message: String) {
            write(Data("stash: \(message.oneLine)\n".utf8), to: STDERR_FILENO)
        }

        /// Writes `text` to standard error as it is (progress bars, reports moved off stdout).
        static func printToStandardError(_ text: String) {
            write(Data(text.utf8), to: STDERR_FILENO)
        }

        private static func write(_ data: Data, to descriptor: Int32) {
            data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                guard var pointer = buffer.baseAddress else { return }
                var remaining = buffer.count
                while remaining > 0 {
                    let written = Foundation.write(descriptor, pointer, remaining)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return  // a closed pipe or full disk: nothing useful left to say, and nowhere to say it
                    }
                    pointer += written
                    remaining -= written
                }
            }
        }
    }
#endif
