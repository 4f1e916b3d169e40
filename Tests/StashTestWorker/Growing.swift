// The worker's `grow` and `grow-check` modes: the growing SIGKILL loop of
// Benchmarks/crash-loop.sh (--mode growing), whose cache never reaches its limit, so that its
// fan-out holds thousands of value files and every reopen lists them all.
import Foundation
import Stash

/// The growing loop's cache: never full, every value of 600 B or more in a file of its own.
func growConfiguration() -> DiskCache.Configuration {
    DiskCache.Configuration(sizeLimit: .gigabytes(20), inlineThreshold: .bytes(512))
}

/// `size` self-describing bytes whose seed is the key's fingerprint: a value read under another
/// key, or torn, differs from `keyedValue(key, size: value.count)`.
func keyedValue(_ key: String, size: Int) -> Data {
    generate(size, seed: fnv1a(Data(key.utf8)))
}

/// Stores ROUND's keys g<ROUND>-<step> (never overwritten) under write-behind until killed.
///
/// Every value (600 B to 6 KB) is above the inline threshold, so each is a file of the fan-out,
/// and the limit is never reached: nothing is evicted and the directory only grows. Prints
/// "stored S" after each store, "pinned S" after each pinned store (one in four, committed
/// before it returns) and "flushed S" after the background work and a flush every 50 stores.
func growForever(directory: URL, round: Int) -> Never {
    var generator = Generator(state: UInt64(round) &+ 1)
    do {
        let cache = try DiskCache(directory: directory, configuration: growConfiguration())
        var step = 0
        while true {
            step += 1
            let key = "g\(round)-\(step)"
            let pinned = Int.random(in: 0..<4, using: &generator) == 0
            try cache.store(
                keyedValue(key, size: Int.random(in: 600...6000, using: &generator)), forKey: key,
                pinned: pinned ? true : nil)
            say(pinned ? "pinned \(step)" : "stored \(step)")
            if step % 50 == 0 {
                cache.waitForBackgroundWork()
                try cache.flush()
                say("flushed \(step)")
            }
        }
    } catch {
        fail("grow failed: \(error)")
    }
}

/// After a kill of `grow`: opens the cache (which starts the orphan reclaim over the whole
/// fan-out), reads every key acknowledged in `logDirectory`'s round-*.log files (up to the last
/// "flushed S", and every "pinned S"), then every other value in the cache, and verifies it.
///
/// Prints "acknowledged=A lost-flushed=F lost-pinned=P damaged=D unacknowledged=U
/// present-unacknowledged=Q entries=E healthy=H".
func checkGrown(directory: URL, logDirectory: String) {
    do {
        let logs = try FileManager.default.contentsOfDirectory(atPath: logDirectory).filter {
            $0.hasPrefix("round-") && $0.hasSuffix(".log")
        }
        let cache = try DiskCache(directory: directory, configuration: growConfiguration())
        cache.waitForBackgroundWork()
        var counts = GrowCheckCounts()
        var read = Set<String>()
        func isPresent(_ key: String) throws -> Bool {
            read.insert(key)
            guard let value = try cache.data(forKey: key) else { return false }
            if value != keyedValue(key, size: value.count) { counts.damaged += 1 }
            return true
        }
        for log in logs {
            let round = log.dropFirst("round-".count).dropLast(".log".count)
            let text = try String(contentsOfFile: logDirectory + "/" + log, encoding: .utf8)
            var flushed = 0
            var pinned = Set<Int>()
            var last = 0
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let step = Int(parts[1]) else { continue }
                last = max(last, step)
                if parts[0] == "flushed" { flushed = max(flushed, step) }
                if parts[0] == "pinned" { pinned.insert(step) }
            }
            for step in stride(from: 1, through: last, by: 1) {
                let present = try isPresent("g\(round)-\(step)")
                if pinned.contains(step) {
                    counts.acknowledged += 1
                    if !present { counts.lostPinned += 1 }
                } else if step <= flushed {
                    counts.acknowledged += 1
                    if !present { counts.lostFlushed += 1 }
                } else {
                    counts.unacknowledged += 1
                    if present { counts.presentUnacknowledged += 1 }
                }
            }
        }
        let keys = try cache.allKeys
        for key in keys where !read.contains(key) { _ = try isPresent(key) }
        let healthy = try cache.verify().isHealthy
        say(
            "acknowledged=\(counts.acknowledged) lost-flushed=\(counts.lostFlushed) lost-pinned=\(counts.lostPinned)"
                + " damaged=\(counts.damaged) unacknowledged=\(counts.unacknowledged)"
                + " present-unacknowledged=\(counts.presentUnacknowledged) entries=\(keys.count) healthy=\(healthy)")
        cache.close()
    } catch {
        fail("grow-check failed: \(error)")
    }
}

/// What `checkGrown` found.
struct GrowCheckCounts {
    var acknowledged = 0
    var lostFlushed = 0
    var lostPinned = 0
    var damaged = 0
    var unacknowledged = 0
    var presentUnacknowledged = 0
}
