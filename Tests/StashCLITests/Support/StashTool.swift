#if Tool
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Runs the built `stash` executable, found next to the test bundle, as a child process.
    enum StashTool {
        /// What one run printed and how it ended.
        struct Result: Sendable {
            var status: Int32
            var output: Data
            var error: String
            /// Standard output as text.
            var text: String { String(decoding: output, as: UTF8.self) }
        }

        /// The `stash` binary.
        static var executable: URL {
            get throws { try BuildProducts.executable("stash") }
        }

        /// Runs `stash arguments…` to completion without blocking a thread of the cooperative pool.
        ///
        /// - Parameters:
        ///   - input: Bytes for standard input; empty by default.
        ///   - environment: Variables to set or replace.
        ///   - prefix: A command to run `stash` through, such as `setpriv`.
        static func run(
            _ arguments: [String], input: Data = Data(), environment: [String: String] = [:], prefix: [String] = []
        ) async throws -> Result {
            let path = try executable.path
            if prefix.isEmpty {
                return try await runProcess(
                    URL(fileURLWithPath: path), arguments, input: input, environment: environment)
            }
            return try await runProcess(
                URL(fileURLWithPath: prefix[0]), Array(prefix.dropFirst()) + [path] + arguments, input: input,
                environment: environment)
        }

        /// Runs any program to completion without blocking a thread of the cooperative pool.
        static func runProcess(
            _ program: URL, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:]
        ) async throws -> Result {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                "stash-cli-io-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let inputURL = scratch.appendingPathComponent("in")
            let outputURL = scratch.appendingPathComponent("out")
            let errorURL = scratch.appendingPathComponent("err")
            try input.write(to: inputURL)
            try Data().write(to: outputURL)
            try Data().write(to: errorURL)

            let process = ChildProcess()
            process.executableURL = program
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
            process.standardOutput = try FileHandle(forWritingTo: outputURL)
            process.standardError = try FileHandle(forWritingTo: errorURL)
            let status: Int32 = try await withCheckedThrowingContinuation { continuation in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
            return Result(
                status: status, output: try contents(of: outputURL),
                error: String(decoding: try contents(of: errorURL), as: UTF8.self))
        }

        /// A captured stream's bytes.
        ///
        /// Not `Data(contentsOf:)`: on Linux, FoundationEssentials reads a file
        /// whose size is 0 into a 4 KiB buffer that it never frees when the file is empty, which
        /// LeakSanitizer reports once for every command with no output.
        private static func contents(of url: URL) throws -> Data {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            return try handle.readToEnd() ?? Data()
        }
    }
#endif
