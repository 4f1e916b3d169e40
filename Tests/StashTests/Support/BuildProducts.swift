import Foundation

/// The directory the build put the tests and the package's executables in (the test workers,
/// `stash`), found the same way on every platform the tests run on.
///
/// On Linux, `swift test` runs the test binary itself, which sits among the products. On Apple
/// platforms the tests run inside an `.xctest` bundle that the toolchain's runner (`xctest`,
/// `swiftpm-testing-helper`) loads, so the process's first argument names the runner: the bundle's
/// own location is the products directory's. Shared through symbolic links by every test target
/// that starts an executable.
enum BuildProducts {
    /// A class of the test module, whose bundle is the one the tests were loaded from.
    private final class Marker {}

    /// Where the test binary or bundle is.
    static var directory: URL {
        #if os(Linux)
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        #else
            Bundle(for: Marker.self).bundleURL.resolvingSymlinksInPath().deletingLastPathComponent()
        #endif
    }

    /// Whether the tests run under AddressSanitizer or ThreadSanitizer (`scripts/sanitize`): their
    /// runtimes keep freed memory in quarantine and shadow every page, so figures of resident memory
    /// say nothing about the code's own, and tests skip those assertions only.
    static let isSanitized: Bool = {
        #if os(Linux)
            let everyImage: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #else
            let everyImage = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #endif
        return dlsym(everyImage, "__asan_init") != nil || dlsym(everyImage, "__tsan_init") != nil
    }()

    struct NotFound: Error, CustomStringConvertible { var description: String }

    /// The executable `name` in the products directory, or in one up to four levels above it.
    ///
    /// - Throws: ``NotFound`` when there is none.
    static func executable(_ name: String) throws -> URL {
        let start = directory
        var directory = start
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        throw NotFound(description: "the \(name) executable was not found in \(start.path) or above it")
    }
}
