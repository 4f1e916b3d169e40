#if Tool
    import Foundation

    /// A value behind a lock.
    final class Locked<Value: Sendable>: @unchecked Sendable {
        // @unchecked: `value` is only touched while `lock` is held.
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
