import Foundation

@testable import Stash

/// A fresh directory under the system's temporary directory, removed when the body ends.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("stash-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// Async flavour of `withTemporaryDirectory`.
func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("stash-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try await body(url)
}

/// A clock that tests move by hand.
final class TestClock: Sendable {
    private let now = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
    var date: Date { now.withLock { $0 } }
    func advance(by seconds: Double) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { self.date } }
}

/// Deterministic bytes for a seed, so that a value identifies its writer.
func pattern(_ count: Int, seed: UInt64) -> Data {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        for i in 0..<count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            buffer[i] = UInt8(truncatingIfNeeded: state)
        }
    }
    return data
}

/// All regular files below `url`, as paths relative to it.
func filesBelow(_ url: URL) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: url.path) else { return [] }
    var files: [String] = []
    while let path = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.appendingPathComponent(path).path, isDirectory: &isDirectory),
            !isDirectory.boolValue
        {
            files.append(path)
        }
    }
    return files.sorted()
}

/// The value files below `url` (`filesBelow` without the sidecars that describe them).
func valueFilesBelow(_ url: URL) -> [String] {
    filesBelow(url).filter { !$0.contains(".meta") }
}

/// The value files below `url` that carry a description (`ValueSidecar`): in their extended
/// attribute or in a sidecar file.
func describedValueFilesBelow(_ url: URL) -> [String] {
    let files = filesBelow(url)
    return valueFilesBelow(url).filter { name in
        files.contains(name + ValueSidecar.suffix)
            || POSIXFile.attribute(ValueSidecar.attributeName, ofFile: url.appendingPathComponent(name).path) != nil
    }
}

/// Removes the description of the value file `name` below `url`, as the version before
/// descriptions wrote it: bytes only.
func removeDescription(ofValueFile name: String, below url: URL) throws {
    let path = url.appendingPathComponent(name).path
    try POSIXFile.removeAttribute(ValueSidecar.attributeName, ofFile: path)
    try POSIXFile.remove(path + ValueSidecar.suffix)
}
