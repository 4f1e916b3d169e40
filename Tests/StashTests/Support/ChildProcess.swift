import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn(3)`: the part of `Foundation.Process` that the tests
/// use, under the same names.
///
/// Not `Process`: on Linux its `run()` (swift-corelibs-foundation in Swift 6.3.1) now and then
/// crashes the whole test process with a bad pointer dereference in `memcpy`. Listing the
/// descriptors to close in the child, it copies each `/proc/self/fd` entry's whole `d_name` (256
/// bytes) out of `readdir`'s buffer, past the end of a short record and into an unmapped page
/// (swiftlang/swift-corelibs-foundation#5472, fixed after 6.3.1). The more descriptors the process
/// has open, the likelier it is: a parallel run of the suite crashed so in `ServeProcess.start`.
///
/// Here the child closes every descriptor above standard error itself (`closefrom` as a spawn
/// action, glibc 2.34 and later; `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin), starts with no signal
/// blocked and every signal at its default, as `Process` does, and one thread per child waits for
/// its exit. Set the properties before ``run()``; ``terminate()``, ``interrupt()``,
/// ``waitUntilExit()`` and the termination properties are safe from any thread after it.
final class ChildProcess: @unchecked Sendable {
    struct SpawnError: Error, CustomStringConvertible {
        var description: String
    }

    var executableURL: URL?
    var arguments: [String]?
    /// The child's environment; `nil`: this process's.
    var environment: [String: String]?
    /// A `Pipe` (the child reads its reading end) or a `FileHandle`; `nil`: this process's.
    var standardInput: Any?
    /// A `Pipe` (the child writes its writing end) or a `FileHandle`; `nil`: this process's.
    var standardOutput: Any?
    /// As ``standardOutput``.
    var standardError: Any?
    /// Called once, on the thread that saw the child exit.
    var terminationHandler: (@Sendable (ChildProcess) -> Void)? {
        get { condition.withLock { handler } }
        set { condition.withLock { handler = newValue } }
    }

    private let condition = NSCondition()
    private var handler: (@Sendable (ChildProcess) -> Void)?
    private var pid: pid_t = 0
    /// The status `waitpid` returned, once the child has exited.
    private var status: Int32?

    init() {}

    var processIdentifier: Int32 { condition.withLock { pid } }

    var isRunning: Bool { condition.withLock { pid != 0 && status == nil } }

    /// The exit code, or the number of the signal that ended the child.
    var terminationStatus: Int32 {
        condition.withLock {
            guard let status else { return 0 }
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : signal
        }
    }

    /// Whether the child exited or a signal ended it.
    var terminationReason: Process.TerminationReason {
        condition.withLock { (status ?? 0) & 0x7f == 0 ? .exit : .uncaughtSignal }
    }

    /// Sends `SIGTERM`.
    func terminate() { signal(SIGTERM) }

    /// Sends `SIGINT`.
    func interrupt() { signal(SIGINT) }

    private func signal(_ number: Int32) {
        let pid = processIdentifier
        guard pid > 0, isRunning else { return }
        kill(pid, number)
    }

    /// Blocks until the child has exited.
    func waitUntilExit() {
        condition.lock()
        defer { condition.unlock() }
        while status == nil { condition.wait() }
    }

    /// Starts the child.
    ///
    /// - Throws: ``SpawnError`` when there is no executable or `posix_spawn` fails.
    func run() throws {
        guard let executableURL else { throw SpawnError(description: "no executable to run") }
        let path = executableURL.path
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t = nil
            var attributes: posix_spawnattr_t = nil
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            let descriptor: Int32?
            switch stream {
            case let pipe as Pipe:
                descriptor =
                    target == 0 ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
            case let handle as FileHandle:
                descriptor = handle.fileDescriptor
            default:
                descriptor = nil
            }
            guard let descriptor else { continue }
            if descriptor < 0 {
                // `FileHandle.nullDevice` has no descriptor of its own.
                try Self.check(
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0), "open /dev/null")
            } else {
                try Self.check(posix_spawn_file_actions_adddup2(&actions, descriptor, target), "dup2 \(descriptor)")
            }
        }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Glibc)
            guard let closeFrom = Self.addCloseFrom else {
                throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np needs glibc 2.34 or later")
            }
            try Self.check(closeFrom(&actions, 3), "closefrom 3")
        #elseif canImport(Darwin)
            flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
            for target: Int32 in 0...2 {
                try Self.check(posix_spawn_file_actions_addinherit_np(&actions, target), "inherit \(target)")
            }
        #endif
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([path] + (arguments ?? [])).map { strdup($0) }
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
        defer { for pointer in argv + environment { free(pointer) } }
        var child: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argv in
            (environment + [nil]).withUnsafeBufferPointer { environment in
                posix_spawn(&child, path, &actions, &attributes, argv.baseAddress!, environment.baseAddress!)
            }
        }
        guard result == 0 else {
            throw SpawnError(description: "posix_spawn \(path): \(String(cString: strerror(result)))")
        }
        let spawned = child
        condition.withLock { pid = spawned }
        // The child has its own copies: the ends it uses are closed here, so that a reader sees the
        // end of a pipe once the child has exited.
        if let pipe = standardInput as? Pipe { try? pipe.fileHandleForReading.close() }
        if let pipe = standardOutput as? Pipe { try? pipe.fileHandleForWriting.close() }
        if let pipe = standardError as? Pipe { try? pipe.fileHandleForWriting.close() }
        let waiter = Thread { [self] in
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) == -1 && errno == EINTR {}
            let handler = condition.withLock { () -> (@Sendable (ChildProcess) -> Void)? in
                self.status = status
                condition.broadcast()
                defer { self.handler = nil }
                return self.handler
            }
            handler?(self)
        }
        waiter.start()
    }

    /// Throws unless a spawn action or attribute call returned 0: a child must never start with
    /// a stream or a descriptor other than the ones asked for.
    private static func check(_ result: Int32, _ what: String) throws {
        guard result != 0 else { return }
        throw SpawnError(description: "posix_spawn action \(what): \(String(cString: strerror(result)))")
    }

    #if canImport(Glibc)
        /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not
        /// declare (it needs `_GNU_SOURCE`): looked up once.
        private static let addCloseFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
                return unsafeBitCast(
                    symbol,
                    to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
            }()
    #endif
}
