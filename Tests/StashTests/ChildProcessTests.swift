import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The tests' `ChildProcess` (Support/ChildProcess.swift), which starts every child process of the
/// suites instead of `Foundation.Process`: what the children get and how their ends are reported.
@Suite struct ChildProcessTests {
    /// Runs `/bin/sh -c script` and returns the child once it has exited.
    static func shell(_ script: String, configure: (ChildProcess) -> Void = { _ in }) throws -> ChildProcess {
        let child = ChildProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        configure(child)
        try child.run()
        child.waitUntilExit()
        return child
    }

    @Test func exitCodesAndSignalsAreReportedAsProcessReportsThem() throws {
        let exited = try Self.shell("exit 3")
        #expect(exited.terminationStatus == 3 && exited.terminationReason == .exit && !exited.isRunning)
        let killed = try Self.shell("kill -TERM $$")
        #expect(killed.terminationStatus == SIGTERM && killed.terminationReason == .uncaughtSignal)
    }

    // Linux only: the child looks at its descriptors in /proc (Darwin has none; there the child
    // gets POSIX_SPAWN_CLOEXEC_DEFAULT instead).
    #if os(Linux)
        /// A descriptor this process has open (a pipe's, not close-on-exec) is not the child's: a child
        /// that inherited another child's pipe would hold it open, and its reader would wait for its end
        /// until that other child exits.
        @Test func theChildGetsNoDescriptorButItsStandardStreams() throws {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            defer { for end in ends { close(end) } }
            let output = Pipe()
            let script = "for n in \(ends[0]) \(ends[1]); do [ -e /proc/$$/fd/$n ] && echo $n; done; exit 0"
            let child = try Self.shell(script) { $0.standardOutput = output }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            #expect(child.terminationStatus == 0)
            #expect(String(decoding: data, as: UTF8.self) == "", "descriptors the child inherited")
        }
    #endif

    /// A child started from a thread that blocks every signal (as dispatch's worker threads do)
    /// still ends on `terminate()`: it starts with no signal blocked.
    @Test func aChildStartedWhereSignalsAreBlockedStillEndsOnTerminate() throws {
        /// Written by the thread before it signals `started`, read after.
        final class Started: @unchecked Sendable { var child: ChildProcess? }
        let box = Started()
        let started = DispatchSemaphore(value: 0)
        Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            let child = ChildProcess()
            child.executableURL = URL(fileURLWithPath: "/bin/sleep")
            child.arguments = ["30"]
            if (try? child.run()) != nil { box.child = child }
            started.signal()
        }.start()
        #expect(started.wait(timeout: .now() + 10) == .success)
        let child = try #require(box.child)
        #expect(child.isRunning)
        child.terminate()
        child.waitUntilExit()
        #expect(child.terminationStatus == SIGTERM && child.terminationReason == .uncaughtSignal)
    }
}
