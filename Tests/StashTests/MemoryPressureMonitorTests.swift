import Foundation
import Testing

@testable import Stash

@Suite struct MemoryPressureMonitorTests {
    /// A fresh directory standing in for `/`, with helpers to write the kernel's files into it.
    private final class FakeRoot {
        let path: String

        init() throws {
            let name = "stash-pressure-\(UUID().uuidString)"
            path = FileManager.default.temporaryDirectory.appendingPathComponent(name).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes `text` to `relativePath`, creating directories, and returns the full path.
        @discardableResult
        func write(_ text: String, to relativePath: String) throws -> String {
            let url = URL(fileURLWithPath: path + "/" + relativePath)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
            return url.path
        }

        func makeDirectory(_ relativePath: String) throws {
            try FileManager.default.createDirectory(
                atPath: path + "/" + relativePath, withIntermediateDirectories: true)
        }
    }

    private static func pressure(some: Double) -> String {
        "some avg10=\(some) avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    }

    private static func meminfo(totalKiB: Int, availableKiB: Int) -> String {
        "MemTotal:       \(totalKiB) kB\nMemFree:         1000 kB\nMemAvailable:   \(availableKiB) kB\nBuffers: 0 kB\n"
    }

    // MARK: - Readings and levels

    @Test func mapsReadingsToLevelsAtTheDocumentedThresholds() {
        let stalls: [(Double, MemoryPressureLevel)] = [(0, .normal), (9.99, .normal), (10, .warning), (40, .critical)]
        for (stall, level) in stalls {
            #expect(MemoryPressureReading(stallPercentage: stall).level() == level)
        }
        let usages: [(Int, MemoryPressureLevel)] = [(849, .normal), (850, .warning), (950, .critical)]
        for (used, level) in usages {
            #expect(MemoryPressureReading(usedBytes: used, limitBytes: 1_000).level() == level)
        }
        #expect(MemoryPressureReading(stallPercentage: 45, usedBytes: 1, limitBytes: 1_000).level() == .critical)
        #expect(MemoryPressureReading(stallPercentage: 1, usedBytes: 900, limitBytes: 1_000).level() == .warning)
        #expect(MemoryPressureReading().level() == .normal)
        let strict = MemoryPressureReading.Thresholds(warningStallPercentage: 1, criticalStallPercentage: 2)
        #expect(MemoryPressureReading(stallPercentage: 1.5).level(thresholds: strict) == .warning)
    }

    @Test func readsStallsFromPressureStallInformation() throws {
        let root = try FakeRoot()
        let files = MemoryPressureReading.Files(pressure: try root.write(Self.pressure(some: 12.5), to: "psi"))
        #expect(MemoryPressureReading(files: files) == MemoryPressureReading(stallPercentage: 12.5))
        #expect(MemoryPressureReading.Parse.stallPercentage("full avg10=3.00\n") == nil)
        #expect(MemoryPressureReading(files: .init(pressure: root.path + "/missing")) == nil)
    }

    @Test func readsCgroupV2UsageWithoutReclaimablePageCache() throws {
        let root = try FakeRoot()
        let files = MemoryPressureReading.Files(
            usage: try root.write("900000\n", to: "memory.current"),
            limit: try root.write("1000000\n", to: "memory.max"),
            stat: try root.write("anon 700000\ninactive_file 100000\nactive_file 100000\n", to: "memory.stat"),
            meminfo: try root.write(Self.meminfo(totalKiB: 16_000_000, availableKiB: 15_000_000), to: "meminfo"))

        let reading = try #require(MemoryPressureReading(files: files))
        #expect(reading == MemoryPressureReading(usedBytes: 800_000, limitBytes: 1_000_000))
        #expect(reading.level() == .normal)

        try root.write("960000\n", to: "memory.current")
        #expect(MemoryPressureReading(files: files)?.level() == .warning)
        try root.write("1060000\n", to: "memory.current")
        #expect(MemoryPressureReading(files: files)?.level() == .critical)
    }

    @Test func usesTheMachineWhenTheControlGroupHasNoLimit() throws {
        let root = try FakeRoot()
        let files = MemoryPressureReading.Files(
            usage: try root.write("900000\n", to: "memory.current"),
            limit: try root.write("max\n", to: "memory.max"),
            meminfo: try root.write(Self.meminfo(totalKiB: 1_000, availableKiB: 100), to: "meminfo"))

        let reading = try #require(MemoryPressureReading(files: files))
        #expect(reading == MemoryPressureReading(usedBytes: 900 * 1024, limitBytes: 1_000 * 1024))
        #expect(reading.level() == .warning)
    }

    @Test func readsCgroupV1FilesAndPrefersWhicheverIsNearerItsLimit() throws {
        let root = try FakeRoot()
        let files = MemoryPressureReading.Files(
            usage: try root.write("600\n", to: "memory.usage_in_bytes"),
            limit: try root.write("1000\n", to: "memory.limit_in_bytes"),
            stat: try root.write("cache 300\ninactive_file 50\ntotal_inactive_file 100\n", to: "memory.stat"),
            meminfo: try root.write(Self.meminfo(totalKiB: 100, availableKiB: 10), to: "meminfo"))
        // The machine (90 % used) is tighter than the group (50 % used).
        #expect(MemoryPressureReading(files: files) == MemoryPressureReading(usedBytes: 92_160, limitBytes: 102_400))

        try root.write(Self.meminfo(totalKiB: 100, availableKiB: 90), to: "meminfo")
        #expect(MemoryPressureReading(files: files) == MemoryPressureReading(usedBytes: 500, limitBytes: 1_000))
    }

    // MARK: - Discovering the files

    @Test func discoversCgroupV2FilesThroughMountinfo() throws {
        let root = try FakeRoot()
        try root.write("0::/app.slice/stash.service\n", to: "proc/self/cgroup")
        try root.write(
            "22 1 0:21 / /proc rw - proc proc rw\n30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n",
            to: "proc/self/mountinfo")
        let group = "sys/fs/cgroup/app.slice/stash.service"
        for name in ["memory.current", "memory.max", "memory.stat"] { try root.write("0\n", to: "\(group)/\(name)") }
        try root.write(Self.pressure(some: 0), to: "\(group)/memory.pressure")
        try root.write(Self.pressure(some: 0), to: "proc/pressure/memory")
        try root.write(Self.meminfo(totalKiB: 1, availableKiB: 1), to: "proc/meminfo")

        let directory = root.path + "/" + group
        #expect(
            MemoryPressureReading.Files.discover(root: root.path)
                == MemoryPressureReading.Files(
                    pressure: directory + "/memory.pressure", usage: directory + "/memory.current",
                    limit: directory + "/memory.max", stat: directory + "/memory.stat",
                    meminfo: root.path + "/proc/meminfo"))
    }

    @Test func discoversAHybridLayoutWithTheMemoryControllerOnCgroupV1() throws {
        // This machine's layout: v1 memory controller, an empty v2 hierarchy at .../unified, and
        // a container that sees its own group as the root of the v1 mount.
        let root = try FakeRoot()
        try root.write("5:devices:/\n4:memory:/docker/abc\n0::/\n", to: "proc/self/cgroup")
        try root.write(
            """
            31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
            35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
            36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw

            """, to: "proc/self/mountinfo")
        try root.makeDirectory("sys/fs/cgroup/unified")
        for name in ["memory.usage_in_bytes", "memory.limit_in_bytes", "memory.stat"] {
            try root.write("0\n", to: "sys/fs/cgroup/memory/\(name)")
        }
        try root.makeDirectory("proc/pressure/memory")  // unreadable, as with psi=0

        let v1 = root.path + "/sys/fs/cgroup/memory"
        #expect(
            MemoryPressureReading.Files.discover(root: root.path)
                == MemoryPressureReading.Files(
                    usage: v1 + "/memory.usage_in_bytes", limit: v1 + "/memory.limit_in_bytes",
                    stat: v1 + "/memory.stat"))
    }

    #if os(Linux)
        @Test func readsThisMachinesMemoryFiles() throws {
            let files = MemoryPressureReading.Files.discover()
            #expect(files.meminfo == "/proc/meminfo")
            if FileManager.default.isReadableFile(atPath: "/proc/pressure/memory") {
                #expect(files.pressure != nil)
            }
            let reading = try #require(MemoryPressureReading(files: files))
            #expect(reading.usedFraction.map { $0 > 0 && $0 < 1 } == true)
        }
    #endif

    // MARK: - The monitor

    @Test func notifiesHandlersOnlyWhenTheLevelRises() {
        let next = LockedValue(MemoryPressureReading())
        let monitor = MemoryPressureMonitor { next.withLock { $0 } }
        let notified = LockedValue<[MemoryPressureLevel]>([])
        let id = monitor.addHandler { level in notified.withLock { $0.append(level) } }

        var levels: [MemoryPressureLevel] = []
        for stall in [0.0, 15, 20, 50, 50, 5, 60, 12] {
            next.withLock { $0 = MemoryPressureReading(stallPercentage: stall) }
            levels.append(monitor.poll())
        }
        monitor.removeHandler(id)
        next.withLock { $0 = MemoryPressureReading(stallPercentage: 0) }
        monitor.poll()
        next.withLock { $0 = MemoryPressureReading(stallPercentage: 90) }
        monitor.poll()

        #expect(levels == [.normal, .warning, .warning, .critical, .critical, .normal, .critical, .warning])
        #expect(notified.withLock { $0 } == [.warning, .critical, .critical])
        #expect(monitor.level == .critical)
        #expect(monitor.lastReading == MemoryPressureReading(stallPercentage: 90))
    }

    @Test func cacheHalvesOnWarningAndEmptiesOnCriticalDrivenByPressureFiles() throws {
        let root = try FakeRoot()
        let psi = try root.write(Self.pressure(some: 0), to: "memory.pressure")
        let monitor = MemoryPressureMonitor(files: .init(pressure: psi))
        // LRU and one shard, so that the half that stays is the most recently stored one.
        let cache = MemoryCache<Int, Int>(policy: .leastRecentlyUsed, shards: 1)
        for key in 0..<10 { cache[key] = key }
        cache.startRespondingToMemoryPressure(monitor)

        #expect(monitor.poll() == .normal)
        #expect(cache.totalCount == 10)
        try root.write(Self.pressure(some: 15), to: "memory.pressure")
        #expect(monitor.poll() == .warning)
        #expect(cache.keysInEvictionOrder == [5, 6, 7, 8, 9])
        try root.write(Self.pressure(some: 55), to: "memory.pressure")
        #expect(monitor.poll() == .critical)
        #expect(cache.totalCount == 0)

        for key in 0..<10 { cache[key] = key }
        cache.stopRespondingToMemoryPressure()
        try root.write(Self.pressure(some: 0), to: "memory.pressure")
        monitor.poll()
        try root.write(Self.pressure(some: 55), to: "memory.pressure")
        monitor.poll()
        #expect(cache.totalCount == 10)
    }

    @Test func monitorDoesNotKeepARespondingCacheAlive() {
        let monitor = MemoryPressureMonitor { MemoryPressureReading(stallPercentage: 50) }
        weak var released: MemoryCache<Int, Int>?
        do {
            let cache = MemoryCache<Int, Int>()
            cache.startRespondingToMemoryPressure(monitor)
            released = cache
        }
        #expect(released == nil)
        #expect(monitor.poll() == .critical)  // and no handler of a dead cache runs
    }

    @Test(.timeLimit(.minutes(5)))
    func startPollsOnItsOwnQueueUntilStopped() async {
        let monitor = MemoryPressureMonitor(pollInterval: .milliseconds(10)) {
            MemoryPressureReading(usedBytes: 99, limitBytes: 100)
        }
        let (levels, continuation) = AsyncStream.makeStream(of: MemoryPressureLevel.self)
        monitor.addHandler { continuation.yield($0) }
        #expect(!monitor.isRunning)

        monitor.start()
        monitor.start()  // a second start changes nothing
        #expect(monitor.isRunning)
        var iterator = levels.makeAsyncIterator()
        #expect(await iterator.next() == .critical)
        monitor.stop()
        #expect(!monitor.isRunning)
        #expect(monitor.level == .critical)
    }
}
