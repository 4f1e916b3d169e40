#if Serve
    import Foundation

    /// A value behind a lock, for test bookkeeping shared across threads.
    final class Locked<Value>: @unchecked Sendable {  // every access holds `lock`
        private let lock = NSLock()
        private var value: Value

        init(_ value: Value) { self.value = value }

        func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
            lock.lock()
            defer { lock.unlock() }
            return try body(&value)
        }
    }
#endif
