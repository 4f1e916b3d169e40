import Dispatch
import Foundation

/// Watches how short of memory the system is and tells handlers when the pressure rises.
///
/// ```swift
/// let monitor = MemoryPressureMonitor()
/// cache.startRespondingToMemoryPressure(monitor)
/// monitor.start()
/// ```
///
/// On Apple platforms the system monitor listens to the kernel's memory-pressure events
/// (`DispatchSource.makeMemoryPressureSource`). On Linux it polls, every ``pollInterval``, the
/// process's control group (cgroup v2 `memory.current` / `memory.max` / `memory.pressure`, or
/// v1 `memory.usage_in_bytes` / `memory.limit_in_bytes`), the system's pressure stall
/// information (`/proc/pressure/memory`) and `/proc/meminfo`, and maps each
/// ``MemoryPressureReading`` to a level with ``thresholds``. You can also supply your own
/// reading, which is how tests drive it.
///
/// Nothing runs until ``start()``. Handlers are called when the level rises (normal → warning,
/// warning → critical, normal → critical), not while it holds or falls, in the order they
/// were added, outside the monitor's lock: on the monitor's queue when it polls by itself, or
/// on the caller's thread for ``poll()``.
public final class MemoryPressureMonitor: Sendable {
    /// Identifies a handler, to remove it with ``removeHandler(_:)``.
    public struct HandlerID: Hashable, Sendable {
        fileprivate let rawValue: Int
    }

    private enum Source: Sendable {
        case reading(@Sendable () -> MemoryPressureReading?)
        #if canImport(Darwin)
            case dispatch
        #endif
    }

    private struct State {
        var level = MemoryPressureLevel.normal
        var lastReading: MemoryPressureReading?
        var handlers: [(id: HandlerID, handler: @Sendable (MemoryPressureLevel) -> Void)] = []
        var nextHandlerID = 0
        var dispatchSource: (any DispatchSourceProtocol)?
    }

    private let state = LockedValue(State())
    private let source: Source
    private let queue = DispatchQueue(label: "Stash.MemoryPressureMonitor")

    /// How often ``start()`` makes the monitor poll its reading.
    ///
    /// Unused by the Apple system monitor, which is told of changes.
    public let pollInterval: Duration

    /// Where each level begins, for readings.
    public let thresholds: MemoryPressureReading.Thresholds

    /// Creates a monitor of the system: memory-pressure events on Apple platforms, the files
    /// found by ``MemoryPressureReading/Files/discover(root:)`` elsewhere.
    ///
    /// - Parameters:
    ///   - pollInterval: How often to poll where polling is needed. Defaults to 5 seconds.
    ///   - thresholds: Where each level begins. Defaults to `Thresholds()`.
    /// - Important: On Linux, finding the files performs blocking file I/O.
    public convenience init(
        pollInterval: Duration = .seconds(5), thresholds: MemoryPressureReading.Thresholds = .init()
    ) {
        #if canImport(Darwin)
            self.init(source: .dispatch, pollInterval: pollInterval, thresholds: thresholds)
        #else
            self.init(files: .discover(), pollInterval: pollInterval, thresholds: thresholds)
        #endif
    }

    /// Creates a monitor that polls a set of Linux memory files.
    ///
    /// - Parameters:
    ///   - files: The files to read, such as fake ones in a test directory.
    ///   - pollInterval: How often ``start()`` polls. Defaults to 5 seconds.
    ///   - thresholds: Where each level begins. Defaults to `Thresholds()`.
    public convenience init(
        files: MemoryPressureReading.Files, pollInterval: Duration = .seconds(5),
        thresholds: MemoryPressureReading.Thresholds = .init()
    ) {
        self.init(pollInterval: pollInterval, thresholds: thresholds) { MemoryPressureReading(files: files) }
    }

    /// Creates a monitor that polls a reading of your choosing.
    ///
    /// - Parameters:
    ///   - pollInterval: How often ``start()`` polls. Defaults to 5 seconds.
    ///   - thresholds: Where each level begins. Defaults to `Thresholds()`.
    ///   - read: Takes a reading, or returns `nil` when none is available (the level is then
    ///     left as it is).
    public convenience init(
        pollInterval: Duration = .seconds(5), thresholds: MemoryPressureReading.Thresholds = .init(),
        read: @escaping @Sendable () -> MemoryPressureReading?
    ) {
        self.init(source: .reading(read), pollInterval: pollInterval, thresholds: thresholds)
    }

    private init(source: Source, pollInterval: Duration, thresholds: MemoryPressureReading.Thresholds) {
        precondition(
            pollInterval > .zero, "MemoryPressureMonitor pollInterval must be positive; it is \(pollInterval).")
        self.source = source
        self.pollInterval = pollInterval
        self.thresholds = thresholds
    }

    deinit {
        state.withLock { $0.dispatchSource }?.cancel()
    }

    /// The most recent level: ``MemoryPressureLevel/normal`` until a reading or event says
    /// otherwise.
    public var level: MemoryPressureLevel { state.withLock { $0.level } }

    /// The most recent reading, or `nil` before the first poll and for the Apple system monitor.
    public var lastReading: MemoryPressureReading? { state.withLock { $0.lastReading } }

    /// Whether ``start()`` has been called without a matching ``stop()``.
    public var isRunning: Bool { state.withLock { $0.dispatchSource != nil } }

    /// Adds a handler to call with the new level whenever the level rises.
    ///
    /// - Parameter handler: Called outside the monitor's lock; it may add or remove handlers.
    /// - Returns: An identifier for ``removeHandler(_:)``.
    @discardableResult
    public func addHandler(_ handler: @escaping @Sendable (MemoryPressureLevel) -> Void) -> HandlerID {
        state.withLock { state in
            let id = HandlerID(rawValue: state.nextHandlerID)
            state.nextHandlerID += 1
            state.handlers.append((id, handler))
            return id
        }
    }

    /// Removes a handler; removing one that is already gone does nothing.
    ///
    /// - Parameter id: What ``addHandler(_:)`` returned.
    public func removeHandler(_ id: HandlerID) {
        state.withLock { $0.handlers.removeAll { $0.id == id } }
    }

    /// Starts watching; calling it while running does nothing.
    ///
    /// A polling monitor polls at once and then every ``pollInterval`` on a private queue; the
    /// Apple system monitor subscribes to memory-pressure events.
    public func start() {
        let started: (any DispatchSourceProtocol)? = state.withLock { state in
            guard state.dispatchSource == nil else { return nil }
            // Created only when it will be kept: libdispatch traps on releasing a source that
            // was never resumed.
            let source = makeDispatchSource()
            state.dispatchSource = source
            return source
        }
        started?.resume()
    }

    private func makeDispatchSource() -> any DispatchSourceProtocol {
        switch source {
        case .reading:
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let interval = DispatchTimeInterval.milliseconds(Self.milliseconds(pollInterval))
            timer.schedule(
                deadline: .now(), repeating: interval, leeway: .milliseconds(Self.milliseconds(pollInterval / 10)))
            timer.setEventHandler { [weak self] in self?.poll() }
            return timer
        #if canImport(Darwin)
            case .dispatch:
                let events = DispatchSource.makeMemoryPressureSource(
                    eventMask: [.normal, .warning, .critical], queue: queue)
                // The handler keeps `events` alive until `stop()` or `deinit` cancels it, which
                // releases the handler.
                events.setEventHandler { [weak self] in
                    guard let self else { return }
                    let event = events.data
                    let level: MemoryPressureLevel =
                        event.contains(.critical) ? .critical : event.contains(.warning) ? .warning : .normal
                    self.update(to: level, reading: nil)
                }
                return events
        #endif
        }
    }

    /// Stops watching; the level and the handlers are kept, and ``start()`` resumes.
    public func stop() {
        state.withLock { state in
            defer { state.dispatchSource = nil }
            return state.dispatchSource
        }?.cancel()
    }

    /// Takes a reading now, updates ``level`` and calls the handlers if it rose.
    ///
    /// This is what the timer does; call it yourself to check at a moment of your choosing.
    /// The Apple system monitor has nothing to read and returns the current level.
    ///
    /// - Returns: The level after the reading.
    /// - Important: The Linux reading performs blocking file I/O.
    @discardableResult
    public func poll() -> MemoryPressureLevel {
        switch source {
        case .reading(let read):
            guard let reading = read() else { return level }
            return update(to: reading.level(thresholds: thresholds), reading: reading)
        #if canImport(Darwin)
            case .dispatch:
                return level
        #endif
        }
    }

    @discardableResult
    private func update(to level: MemoryPressureLevel, reading: MemoryPressureReading?) -> MemoryPressureLevel {
        let handlers = state.withLock { state in
            let previous = state.level
            state.level = level
            if let reading { state.lastReading = reading }
            return level > previous ? state.handlers.map(\.handler) : []
        }
        for handler in handlers { handler(level) }
        return level
    }

    /// Whole milliseconds, at least 1 and at most `Int32.max` (24 days), so that the interval
    /// fits `DispatchTimeInterval` even where `Int` is 32 bits wide (watchOS).
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1e3 + Double(attoseconds) / 1e15
        return Int(max(1, min(milliseconds, Double(Int32.max))))
    }
}
