import Foundation

extension MemoryPressureReading {
    /// The Linux files a reading is taken from; any of them may be missing.
    ///
    /// ``discover(root:)`` finds the right ones for the current process; tests point them at
    /// fake files in a temporary directory.
    public struct Files: Hashable, Sendable {
        /// A pressure stall information file: the control group's `memory.pressure` (cgroup v2)
        /// or the system-wide `/proc/pressure/memory`.
        public var pressure: String?
        /// The control group's usage: `memory.current` (v2) or `memory.usage_in_bytes` (v1).
        public var usage: String?
        /// The control group's limit: `memory.max` (v2, `max` means none) or
        /// `memory.limit_in_bytes` (v1).
        public var limit: String?
        /// The control group's `memory.stat`, whose `inactive_file` (v2) or
        /// `total_inactive_file` (v1) is reclaimable page cache that usage should not count.
        public var stat: String?
        /// `/proc/meminfo`, for `MemTotal` and `MemAvailable`.
        public var meminfo: String?

        /// Creates a set of paths.
        ///
        /// - Parameters:
        ///   - pressure: The PSI file.
        ///   - usage: The control group's usage file.
        ///   - limit: The control group's limit file.
        ///   - stat: The control group's `memory.stat`.
        ///   - meminfo: The `meminfo` file.
        public init(
            pressure: String? = nil, usage: String? = nil, limit: String? = nil, stat: String? = nil,
            meminfo: String? = nil
        ) {
            self.pressure = pressure
            self.usage = usage
            self.limit = limit
            self.stat = stat
            self.meminfo = meminfo
        }

        /// Finds the files for the calling process's memory control group, preferring cgroup
        /// v2, then v1, and falling back to the system-wide `/proc/pressure/memory` and
        /// `/proc/meminfo`.
        ///
        /// The group is read from `/proc/self/cgroup` and located through the mount points in
        /// `/proc/self/mountinfo`, so it works inside containers whether or not they have a
        /// cgroup namespace.
        ///
        /// - Parameter root: The directory that stands for `/`, for tests. Defaults to `/`.
        /// - Returns: The files that exist; properties for missing ones are `nil`.
        /// - Important: Performs blocking file I/O.
        public static func discover(root: String = "/") -> Files {
            let root = root.hasSuffix("/") ? String(root.dropLast()) : root
            let memberships = ControlGroups.memberships(readText(atPath: root + "/proc/self/cgroup") ?? "")
            let mounts = ControlGroups.mounts(readText(atPath: root + "/proc/self/mountinfo") ?? "")
            var files = Files()
            let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }

            let v2 = memberships.v2.flatMap { ControlGroups.directory(of: $0, in: mounts.v2, root: root) }
            let v1 = memberships.memoryV1.flatMap { ControlGroups.directory(of: $0, in: mounts.memoryV1, root: root) }
            if let v2, exists(v2 + "/memory.current") {
                files.usage = v2 + "/memory.current"
                files.limit = v2 + "/memory.max"
                files.stat = v2 + "/memory.stat"
            } else if let v1, exists(v1 + "/memory.usage_in_bytes") {
                files.usage = v1 + "/memory.usage_in_bytes"
                files.limit = v1 + "/memory.limit_in_bytes"
                files.stat = v1 + "/memory.stat"
            }
            // The file exists but reading fails when the kernel was booted with psi=0.
            let pressureCandidates = [v2.map { $0 + "/memory.pressure" }, root + "/proc/pressure/memory"]
            files.pressure = pressureCandidates.lazy.compactMap { $0 }.first { path in
                readText(atPath: path).flatMap(Parse.stallPercentage) != nil
            }
            if exists(root + "/proc/meminfo") { files.meminfo = root + "/proc/meminfo" }
            return files
        }
    }

    /// Reads the files and combines what they say.
    ///
    /// ``stallPercentage`` comes from the PSI file. Usage and limit come from whichever of the
    /// control group and the whole machine (`MemTotal − MemAvailable` of `MemTotal`) is nearer
    /// its limit: a process can run short of either.
    ///
    /// - Parameter files: The files to read.
    /// - Returns: `nil` if none of the files could be read and understood.
    /// - Important: Performs blocking file I/O.
    public init?(files: Files) {
        let stall = files.pressure.flatMap(readText).flatMap(Parse.stallPercentage)
        var candidates: [(used: Int, limit: Int)] = []
        if let usage = files.usage.flatMap(readText).flatMap(Parse.integer),
            let limit = files.limit.flatMap(readText).flatMap(Parse.integer)
        {
            let reclaimable = files.stat.flatMap(readText).flatMap(Parse.inactiveFileBytes) ?? 0
            candidates.append((max(0, usage - reclaimable), limit))
        }
        if let meminfo = files.meminfo.flatMap(readText).flatMap(Parse.meminfo) {
            candidates.append((meminfo.total - meminfo.available, meminfo.total))
        }
        let tightest = candidates.filter { $0.limit > 0 }.max { lhs, rhs in
            Double(lhs.used) / Double(lhs.limit) < Double(rhs.used) / Double(rhs.limit)
        }
        guard stall != nil || tightest != nil else { return nil }
        self.init(stallPercentage: stall, usedBytes: tightest?.used, limitBytes: tightest?.limit)
    }

    /// Parsers for the kernel's text formats; each returns `nil` for text it does not understand.
    enum Parse {
        /// `some avg10=1.23 avg60=… total=…` → 1.23.
        static func stallPercentage(_ text: String) -> Double? {
            for line in text.split(separator: "\n") where line.hasPrefix("some ") {
                for field in line.split(separator: " ") where field.hasPrefix("avg10=") {
                    return Double(field.dropFirst("avg10=".count))
                }
            }
            return nil
        }

        /// `123456\n` → 123456; `max` (no cgroup v2 limit) → `nil`.
        static func integer(_ text: String) -> Int? {
            Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }

        /// The `total_inactive_file` (cgroup v1, whole subtree) or else `inactive_file` line of
        /// `memory.stat`.
        static func inactiveFileBytes(_ text: String) -> Int? {
            var values: [Substring: Int] = [:]
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                if fields.count == 2, let value = Int(fields[1]) { values[fields[0]] = value }
            }
            return values["total_inactive_file"] ?? values["inactive_file"]
        }

        /// `MemTotal` and `MemAvailable` from `/proc/meminfo`, in bytes.
        static func meminfo(_ text: String) -> (total: Int, available: Int)? {
            var total: Int?
            var available: Int?
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 2, let kibibytes = Int(fields[1]) else { continue }
                switch fields[0] {
                case "MemTotal:": total = kibibytes * 1024
                case "MemAvailable:": available = kibibytes * 1024
                default: continue
                }
            }
            guard let total, let available else { return nil }
            return (total, available)
        }
    }
}

/// Reads a small text file such as those in `/proc` and `/sys`, whose reported size is 0, by
/// reading until end of file.
private func readText(atPath path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { break }
        bytes.append(contentsOf: buffer[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}
