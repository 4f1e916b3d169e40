#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif
import UIKit  // flagged
#if canImport(AppKit)
    import AppKit
    typealias Image = NSImage  // flagged: not Sendable on macOS 13
    func show(_ image: NSImage) {}
#endif

func syncFile(_ fd: Int32) {
    _ = fsync(fd)  // flagged
}
func syncFully(_ fd: Int32) {
    #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) != -1 { return }
    #endif
    _ = fsync(fd)
}
let lock = os_unfair_lock()  // flagged
#if canImport(os)
    let appleLock = os_unfair_lock()
#elseif os(Linux)
    let status = try? String(contentsOfFile: "/proc/self/status")
#else
    let otherStatus = "/proc/self/status"
#endif
#if !os(Linux) && !canImport(Glibc)
    let notLinux = "/proc/self/status"  // flagged
#endif
let anywhere = try? String(contentsOfFile: "/proc/self/status")  // flagged
let root = "/tmp/fake"
let fake = root + "/proc/meminfo"
func tmpfs() { _ = mount("tmpfs", "/mnt", "tmpfs", 0, nil) }  // flagged
func detach() { _ = umount2("/mnt", Int32(MNT_DETACH)) }  // flagged twice
func field(_ mount: String) -> String { mount }
let socketType = Int32(SOCK_STREAM.rawValue)  // flagged
let connected = Glibc.connect  // flagged
#if canImport(Glibc)
    let linuxSocketType = Int32(SOCK_STREAM.rawValue)
#endif
