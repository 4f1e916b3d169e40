import Foundation

/// Runs the test target's worker executable (`Worker.executableName`, defined by each target
/// that uses this file), built next to the test bundle, as a child process.
///
/// Shared through symbolic links by StashHTTPTests, StashTransportTests, StashMetricsTests and
/// StashPostgresTests.
enum Worker {

    static var executable: URL {
        get throws { try BuildProducts.executable(executableName) }
    }

    /// Runs the worker to completion off the cooperative thread pool (a test's server needs
    /// those threads meanwhile) and returns its exit status and standard output.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let path = try executable
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let process = ChildProcess()
                    let output = Pipe()
                    process.executableURL = path
                    process.arguments = arguments
                    process.standardOutput = output
                    try process.run()
                    let data = readToEnd(output.fileHandleForReading)
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// A worker running in the background, whose output lines a test can wait for, and kill.
// @unchecked: `process` is only read after `run()`, and ChildProcess is thread-safe for kill and termination.
final class RunningWorker: @unchecked Sendable {
    /// The lines written so far.
    let lines = Observed<[String]>([])
    private let process: ChildProcess
    private let exited = Gate()

    /// Starts the worker with `arguments`.
    init(_ arguments: [String]) throws {
        let process = ChildProcess()
        let output = Pipe()
        process.executableURL = try Worker.executable
        process.arguments = arguments
        process.standardOutput = output
        self.process = process
        let lines = lines
        let exited = exited
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        let handle = output.fileHandleForReading
        DispatchQueue.global().async {
            var pending = Data()
            while true {
                let data = Worker.availableData(handle)
                if data.isEmpty { break }
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.update { $0.append(line) }
                }
            }
        }
    }

    /// Kills the worker with SIGKILL and waits until it is gone.
    func kill() async throws {
        Foundation.kill(process.processIdentifier, SIGKILL)
        try await exited.wait()
    }
}
