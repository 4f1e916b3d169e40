import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the `StashTestWorker` executable, built next to the test bundle, as a child process.
enum Worker {
    static var executable: URL {
        get throws { try BuildProducts.executable("StashTestWorker") }
    }

    /// Starts the worker; `prefix` runs it through another command (such as `setpriv`).
    static func start(_ arguments: [String], prefix: [String] = []) throws -> (ChildProcess, FileHandle) {
        let process = ChildProcess()
        let output = Pipe()
        let path = try executable.path
        if prefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [path] + arguments
        }
        process.standardOutput = output
        try process.run()
        return (process, output.fileHandleForReading)
    }

    /// Runs the worker to completion and returns its exit status and standard output.
    static func run(_ arguments: [String], prefix: [String] = []) throws -> (status: Int32, output: String) {
        let (process, output) = try start(arguments, prefix: prefix)
        let data = readToEnd(output)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Reads the worker's output until `lines` lines starting with `prefix` have appeared.
    ///
    /// Returns `false` if the worker closed its output first.
    static func waitForLines(_ handle: FileHandle, prefix: String, count lines: Int) -> Bool {
        var buffer = ""
        var seen = 0
        while seen < lines {
            let chunk = availableData(handle)
            if chunk.isEmpty { return false }
            buffer += String(decoding: chunk, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                if buffer[..<newline].hasPrefix(prefix) { seen += 1 }
                buffer.removeSubrange(...newline)
            }
        }
        return true
    }
}
