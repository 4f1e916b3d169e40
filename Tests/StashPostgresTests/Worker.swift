import Foundation

/// Runs the `StashPostgresTestWorker` executable, built next to the test bundle, as a child process.
enum Worker {
    struct WorkerError: Error { var message: String }

    static var executable: URL {
        get throws {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent()
            for _ in 0..<5 {
                let candidate = directory.appendingPathComponent("StashPostgresTestWorker")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw WorkerError(message: "StashPostgresTestWorker not found near \(CommandLine.arguments[0])")
        }
    }

    /// Runs the worker to completion off the cooperative thread pool and returns its exit status
    /// and standard output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let path = try executable
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let process = Process()
                    let output = Pipe()
                    process.executableURL = path
                    process.arguments = arguments
                    process.standardOutput = output
                    try process.run()
                    let data = output.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
