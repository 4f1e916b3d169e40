#if Serve
    import Foundation
    import Stash

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    #if canImport(Glibc)
        private let systemWrite = Glibc.write
    #elseif canImport(Darwin)
        private let systemWrite = Darwin.write
    #endif

    /// The access log: one line per exchange in the Common Log Format, with the cache status
    /// appended (`127.0.0.1 - - [26/Nov/2026:06:00:00 +0000] "GET /a HTTP/1.1" 200 1024 HIT`).
    ///
    /// Lines are buffered and written in batches (when 64 KiB have gathered, every second, and on
    /// ``flush()``), so that logging costs a hit no system call.
    final class AccessLog: Sendable {
        private struct State {
            var buffer: [UInt8] = []
            var second = 0 as time_t
            var stamp = ""
        }

        private let descriptor: Int32
        private let closesDescriptor: Bool
        private let state = LockedValue(State())

        /// Appends to the file at `path`, or writes to standard output for `-`.
        init(path: String) throws {
            if path == "-" {
                descriptor = STDOUT_FILENO
                closesDescriptor = false
            } else {
                descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard descriptor >= 0 else {
                    throw StashError(
                        .io,
                        "Cannot open the access log \(path): \(String(cString: strerror(errno))). Check that its directory exists and is writable."
                    )
                }
                closesDescriptor = true
            }
        }

        deinit {
            flush()
            if closesDescriptor { close(descriptor) }
        }

        /// Appends the line of one exchange.
        ///
        /// - Complexity: O(line); the bytes are appended in place, with no intermediate string.
        func write(_ record: ExchangeRecord) {
            let second = time(nil)
            let full = state.withLock { state -> [UInt8]? in
                if second != state.second {
                    state.second = second
                    state.stamp = Self.stamp(Date(timeIntervalSince1970: TimeInterval(second)))
                }
                var buffer = state.buffer
                state.buffer = []
                buffer.append(contentsOf: record.client.utf8)
                buffer.append(contentsOf: " - - [".utf8)
                buffer.append(contentsOf: state.stamp.utf8)
                buffer.append(contentsOf: "] \"".utf8)
                buffer.append(contentsOf: record.method.utf8)
                buffer.append(0x20)
                buffer.append(contentsOf: record.target.utf8)
                buffer.append(contentsOf: " HTTP/".utf8)
                Self.appendDecimal(record.version.major, to: &buffer)
                buffer.append(0x2E)
                Self.appendDecimal(record.version.minor, to: &buffer)
                buffer.append(contentsOf: "\" ".utf8)
                if let status = record.status { Self.appendDecimal(status, to: &buffer) } else { buffer.append(0x2D) }
                buffer.append(0x20)
                Self.appendDecimal(record.bytes, to: &buffer)
                buffer.append(0x20)
                buffer.append(contentsOf: record.cacheStatus.rawValue.utf8)
                buffer.append(0x0A)
                guard buffer.count >= 65_536 else {
                    state.buffer = buffer
                    return nil
                }
                state.buffer.reserveCapacity(70_000)
                return buffer
            }
            if let full { writeAll(full) }
        }

        private static func appendDecimal(_ value: some BinaryInteger, to buffer: inout [UInt8]) {
            var value = Int(value)
            if value < 0 {
                buffer.append(0x2D)
                value = -value
            }
            let start = buffer.count
            repeat {
                buffer.append(UInt8(0x30 + value % 10))
                value /= 10
            } while value > 0
            buffer[start...].reverse()
        }

        /// Writes the buffered lines.
        func flush() {
            let pending = state.withLock { state -> [UInt8] in
                defer { state.buffer.removeAll(keepingCapacity: true) }
                return state.buffer
            }
            if !pending.isEmpty { writeAll(pending) }
        }

        private func writeAll(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = systemWrite(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written <= 0 {
                        if errno == EINTR { continue }
                        return  // a full disk loses log lines, never requests
                    }
                    offset += written
                }
            }
        }

        private static func stamp(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "dd/MMM/yyyy:HH:mm:ss Z"
            return formatter.string(from: date)
        }
    }
#endif
