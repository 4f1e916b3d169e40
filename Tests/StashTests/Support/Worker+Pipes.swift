import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading a worker's pipes. Shared by symbolic links with the other test targets' `Worker`.
extension Worker {
    /// The bytes `handle` has now (blocking until at least one, or end of file: then empty).
    ///
    /// Not `FileHandle.availableData`: Foundation stops the process with a fatal error when the
    /// read is interrupted by a signal (EINTR), which a child exiting (SIGCHLD) can cause while
    /// another test reads; this read tries again.
    static func availableData(_ handle: FileHandle) -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[..<count]) }
            if errno != EINTR { return Data() }
        }
    }

    /// Everything `handle` yields until end of file, reading as ``availableData(_:)`` does.
    static func readToEnd(_ handle: FileHandle) -> Data {
        var data = Data()
        while case let chunk = availableData(handle), !chunk.isEmpty { data.append(chunk) }
        return data
    }
}
