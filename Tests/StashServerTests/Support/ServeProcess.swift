#if Serve
    import Foundation
    import Testing

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `stash serve` running as a child process on a port the system picks.
    final class ServeProcess: Sendable {
        struct Failure: Error, CustomStringConvertible { var description: String }

        let process: ChildProcess
        let port: Int
        let metricsPort: Int?
        private let output: Locked<Data>
        private let errors: Locked<Data>
        /// Opens when the process's standard error was read to its end.
        private let errorsRead: Gate

        private init(
            process: ChildProcess, port: Int, metricsPort: Int?, output: Locked<Data>, errors: Locked<Data>,
            errorsRead: Gate
        ) {
            self.process = process
            self.port = port
            self.metricsPort = metricsPort
            self.output = output
            self.errors = errors
            self.errorsRead = errorsRead
        }

        /// The built `stash` binary, next to the test bundle.
        static var executable: URL {
            get throws { try BuildProducts.executable("stash") }
        }

        /// Starts `stash serve ARGUMENTS --listen 127.0.0.1:0` and waits for its "listening on" line.
        static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> ServeProcess {
            let process = ChildProcess()
            process.executableURL = try executable
            // A test process that dies leaves no proxy behind.
            process.arguments = ["serve", "--listen", "127.0.0.1:0", "--exit-with-parent"] + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let outPipe = Pipe()
            let errPipe = Pipe()
            process.standardOutput = outPipe
            process.standardError = errPipe
            let output = Locked(Data())
            let errors = Locked(Data())
            let ready = AsyncStream<String>.makeStream()
            let errorsRead = Gate()
            // Each pipe is read to its end by a thread of its own, with blocking reads. Not with
            // `readabilityHandler`: on Linux its dispatch source can still be draining when the pipe's
            // descriptor is closed, and ThreadSanitizer builds crashed in libdispatch's manager thread.
            readToEnd(outPipe.fileHandleForReading) { data in
                guard let data else {
                    ready.continuation.finish()
                    return
                }
                let text = output.withLock { output -> String in
                    output.append(data)
                    return String(decoding: output, as: UTF8.self)
                }
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on") }) {
                    ready.continuation.yield(String(line))
                }
            }
            readToEnd(errPipe.fileHandleForReading) { data in
                guard let data else {
                    errorsRead.open()
                    return
                }
                errors.withLock { $0.append(data) }
            }
            process.terminationHandler = { _ in ready.continuation.finish() }
            try process.run()
            var line: String?
            for await first in ready.stream {
                line = first
                break
            }
            guard let line else {
                process.waitUntilExit()
                await errorsRead.wait()
                let message = errors.withLock { String(decoding: $0, as: UTF8.self) }
                throw Failure(description: "stash serve exited with \(process.terminationStatus): \(message)")
            }
            // "listening on 127.0.0.1:PORT[, metrics on 127.0.0.1:PORT]"
            let ports = line.split(separator: ",").map { part in
                Int(part.split(separator: ":").last.map(String.init) ?? "") ?? 0
            }
            return ServeProcess(
                process: process, port: ports[0], metricsPort: ports.count > 1 ? ports[1] : nil, output: output,
                errors: errors, errorsRead: errorsRead)
        }

        /// Calls `received` with each chunk read from `handle`, on a thread of its own, then with `nil`
        /// at the end of the stream.
        private static func readToEnd(_ handle: FileHandle, _ received: @escaping @Sendable (Data?) -> Void) {
            Thread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    received(data)
                }
                received(nil)
            }.start()
        }

        /// What the process wrote to standard error so far.
        var standardError: String { errors.withLock { String(decoding: $0, as: UTF8.self) } }

        /// What the process wrote to standard output so far.
        var standardOutput: String { output.withLock { String(decoding: $0, as: UTF8.self) } }

        /// Sends `signal` to the process.
        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// Waits for the process to exit and returns its status.
        ///
        /// A sanitizer's report in what the process wrote to standard error (a build with
        /// `scripts/sanitize`) fails the test that ran it: the proxy's threads run in this child
        /// process, where the test process's own sanitizer does not look.
        func waitForExit() async -> Int32 {
            let process = process
            let status = await withCheckedContinuation { continuation in
                Thread {
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus)
                }.start()
            }
            await errorsRead.wait()
            let errors = standardError
            for marker in ["WARNING: ThreadSanitizer", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer"]
            where errors.contains(marker) {
                Issue.record("stash serve (process \(process.processIdentifier)) reported \(marker):\n\(errors)")
                break
            }
            return status
        }

        /// Stops the process (SIGTERM, then SIGKILL after 10 s) and waits for it.
        func stop() async {
            guard process.isRunning else { return }
            signal(SIGTERM)
            let pid = process.processIdentifier
            let killer = Task {
                try await Task.sleep(for: .seconds(10))
                kill(pid, SIGKILL)
            }
            _ = await waitForExit()
            killer.cancel()
        }

        /// Starts `stash serve` with `arguments`, runs `body` with it, and stops it whatever `body` does.
        static func running<T>(_ arguments: [String], _ body: (ServeProcess) async throws -> T) async throws -> T {
            let proxy = try await start(arguments)
            do {
                let result = try await body(proxy)
                await proxy.stop()
                return result
            } catch {
                await proxy.stop()
                throw error
            }
        }
    }

    /// Runs `body` with an origin and a `stash serve` in front of it, and stops both whatever happens.
    func withProxy<T>(
        _ arguments: [String] = [], _ body: (Origin, ServeProcess) async throws -> T
    ) async throws -> T {
        let origin = try await Origin.start()
        let proxy: ServeProcess
        do {
            proxy = try await ServeProcess.start(["--origin", origin.url] + arguments)
        } catch {
            await origin.stop()
            throw error
        }
        do {
            let result = try await body(origin, proxy)
            await proxy.stop()
            await origin.stop()
            return result
        } catch {
            await proxy.stop()
            await origin.stop()
            throw error
        }
    }
#endif
