import Foundation

/// Locates the calling process's Linux control groups from `/proc/self/cgroup` and
/// `/proc/self/mountinfo`.
///
/// A group path such as `/system.slice/app.service` is relative to the root of its hierarchy;
/// the hierarchy is mounted somewhere (`/sys/fs/cgroup`, `/sys/fs/cgroup/unified`,
/// `/sys/fs/cgroup/memory`), possibly showing only a subtree of it (a container without a
/// cgroup namespace sees its own group as the mount's root).
enum ControlGroups {
    /// The groups the process belongs to, as `/proc/self/cgroup` names them.
    struct Memberships: Equatable {
        /// The cgroup v2 group (the `0::path` line).
        var v2: String?
        /// The cgroup v1 group of the memory controller (the `N:…memory…:path` line).
        var memoryV1: String?
    }

    /// A mounted control-group hierarchy: which of its groups is visible at which directory.
    struct Mount: Equatable {
        /// The group shown at the mount point.
        var root: String
        /// Where it is mounted.
        var mountPoint: String
    }

    /// Parses `/proc/self/cgroup`: one `hierarchy-ID:controller-list:group-path` per line.
    static func memberships(_ text: String) -> Memberships {
        var memberships = Memberships()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0", fields[1].isEmpty {
                memberships.v2 = String(fields[2])
            } else if fields[1].split(separator: ",").contains("memory") {
                memberships.memoryV1 = String(fields[2])
            }
        }
        return memberships
    }

    /// Parses `/proc/self/mountinfo` for cgroup v2 mounts and cgroup v1 memory mounts.
    ///
    /// A line reads
    /// `id parent major:minor root mount-point options [optional…] - fstype source super-options`.
    static func mounts(_ text: String) -> (v2: [Mount], memoryV1: [Mount]) {
        var v2: [Mount] = []
        var memoryV1: [Mount] = []
        for line in text.split(separator: "\n") {
            guard let separator = line.range(of: " - ") else { continue }
            let mountFields = line[..<separator.lowerBound].split(separator: " ")
            let fileSystemFields = line[separator.upperBound...].split(separator: " ")
            guard mountFields.count >= 5, let type = fileSystemFields.first else { continue }
            let mount = Mount(root: unescape(mountFields[3]), mountPoint: unescape(mountFields[4]))
            if type == "cgroup2" {
                v2.append(mount)
            } else if type == "cgroup", fileSystemFields.count >= 3,
                fileSystemFields[2].split(separator: ",").contains("memory")
            {
                memoryV1.append(mount)
            }
        }
        return (v2, memoryV1)
    }

    /// The directory of `group` under the first mount that shows it and exists, prefixed with
    /// `root` (the stand-in for `/` in tests).
    static func directory(of group: String, in mounts: [Mount], root: String) -> String? {
        for mount in mounts {
            let relative: Substring
            if mount.root == "/" {
                relative = group[...]
            } else if group == mount.root || group.hasPrefix(mount.root + "/") {
                relative = group.dropFirst(mount.root.count)
            } else {
                continue
            }
            var directory = root + mount.mountPoint + relative
            while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
            if FileManager.default.fileExists(atPath: directory) { return directory }
        }
        return nil
    }

    /// Undoes mountinfo's octal escapes (`\040` for a space, `\134` for a backslash, …).
    private static func unescape(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var utf8 = field.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let code = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(code)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
