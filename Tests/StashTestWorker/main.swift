// A child process for the crash-safety and multi-process tests. It is killed with SIGKILL
// mid-write, or runs beside another copy of itself on the same cache directory.
//
//   StashTestWorker write-loop DIR SEED      store/overwrite/remove forever, printing progress
//   StashTestWorker mixed DIR SEED MILLIS    store/read/remove for MILLIS ms, report counts
//   StashTestWorker check DIR                read every entry, report complete and broken values
//   StashTestWorker open DIR                 open and store one value; report the error code
//   StashTestWorker stall-rebuild DIR        open, and stop inside the index rebuild until killed
//   StashTestWorker read-only DIR            read every entry of an unwritable cache, then try a store
//   StashTestWorker hit DIR KEY COUNT        read KEY COUNT times (LRU, count limit 4), then close
//   StashTestWorker wal-crash DIR SEED FLUSH TEAR
//                                            store/remove forever, printing each operation before
//                                            and after; at the FLUSH-th write of gathered WAL frames,
//                                            write only TEAR (0-1) of them and exit with status 3
//   StashTestWorker stage-one DIR MILLIS     store one value (write-behind, MILLIS ms delay), never flush
//   StashTestWorker burst DIR ROUND          store bursts of new keys forever (the SIGKILL loop)
//   StashTestWorker burst-check DIR ROUND LAST
//                                            check every value, and which of ROUND's keys exist
//   StashTestWorker grow DIR ROUND          store new keys forever, every value a file (the growing
//                                            SIGKILL loop: the fan-out holds thousands of files)
//   StashTestWorker grow-check DIR LOGDIR    reopen, read every key that a `grow` log in LOGDIR
//                                            acknowledged, and every other value
//   StashTestWorker memory-statistics DIR [sqlite-first]
//                                            store and read 100 values (after initializing SQLite
//                                            itself first, with sqlite-first); report SQLite's
//                                            memory_used counter
//   StashTestWorker write-fixture DIR        write the migration fixture (Tests/StashTests/Fixtures)
//   StashTestWorker replace-loop DIR SEED    overwrite the key `one` forever (immediate writes), each
//                                            value's seed in its etag, inline and file sizes mixed
//
// Every value is self-describing: an 8-byte seed followed by bytes generated from it, so a
// reader can tell a complete, correct value from a torn or mixed-up one.
import CSQLite
import CStashVFS
import Foundation
import Stash

func generate(_ count: Int, seed: UInt64) -> Data { SeededValue.make(count, seed: seed) }

func isIntact(_ data: Data) -> Bool { SeededValue.seed(of: data) != nil }

func configuration(seed: UInt64) -> DiskCache.Configuration {
    DiskCache.Configuration(sizeLimit: .bytes(3_000_000), countLimit: 200, inlineThreshold: .bytes(8192))
}

func randomSize(_ generator: inout some RandomNumberGenerator) -> Int {
    Bool.random(using: &generator)
        ? Int.random(in: 8...8000, using: &generator) : Int.random(in: 8...300_000, using: &generator)
}

struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Writes a line to stdout unbuffered, so that a parent reading the pipe sees it at once.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: StashTestWorker MODE DIR [SEED] [MILLIS]") }
let directory = URL(fileURLWithPath: arguments[2])
let seed = arguments.count > 3 ? UInt64(arguments[3]) ?? 1 : 1

switch arguments[1] {
case "replace-loop":
    var generator = Generator(state: seed)
    do {
        let cache = try DiskCache(
            directory: directory,
            configuration: DiskCache.Configuration(
                sizeLimit: .bytes(50_000_000), inlineThreshold: .bytes(8192), writeMode: .immediate))
        var step = 0
        while true {
            let valueSeed = generator.next()
            let size =
                step % 2 == 0
                ? Int.random(in: 8...8000, using: &generator) : Int.random(in: 9000...200_000, using: &generator)
            try cache.store(
                generate(size, seed: valueSeed), forKey: "one", metadata: DiskCache.Metadata(etag: "\(valueSeed)"))
            step += 1
            if step % 5 == 0 { say("progress \(step)") }
        }
    } catch {
        fail("replace-loop failed: \(error)")
    }

case "write-loop":
    var generator = Generator(state: seed)
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration(seed: seed))
        var step = 0
        while true {
            let key = "key-\(Int.random(in: 0..<300, using: &generator))"
            if Int.random(in: 0..<10, using: &generator) == 0 {
                try cache.removeData(forKey: key)
            } else {
                let valueSeed = generator.next()
                try cache.store(generate(randomSize(&generator), seed: valueSeed), forKey: key)
            }
            step += 1
            if step % 5 == 0 { say("progress \(step)") }
        }
    } catch {
        fail("write-loop failed: \(error)")
    }

case "mixed":
    let millis = arguments.count > 4 ? Int(arguments[4]) ?? 2000 : 2000
    var generator = Generator(state: seed)
    let deadline = Date().addingTimeInterval(Double(millis) / 1000)
    var counts = (stores: 0, hits: 0, misses: 0, removes: 0, corrupt: 0)
    var stage = "open"
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration(seed: seed))
        while Date() < deadline {
            stage = "operation \(counts.stores + counts.hits + counts.misses + counts.removes + 1)"
            let key = "key-\(Int.random(in: 0..<150, using: &generator))"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...3:
                try cache.store(generate(randomSize(&generator), seed: generator.next()), forKey: key)
                counts.stores += 1
            case 4...8:
                if let value = try cache.data(forKey: key) {
                    counts.hits += 1
                    if !isIntact(value) { counts.corrupt += 1 }
                } else {
                    counts.misses += 1
                }
            default:
                try cache.removeData(forKey: key)
                counts.removes += 1
            }
        }
    } catch {
        fail("mixed failed at \(stage): \(error)")
    }
    say(
        "stores=\(counts.stores) hits=\(counts.hits) misses=\(counts.misses) removes=\(counts.removes) corrupt=\(counts.corrupt)"
    )

case "check":
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration(seed: seed))
        var intact = 0
        var broken = 0
        for key in try cache.allKeys {
            if let value = try cache.data(forKey: key) {
                if isIntact(value) { intact += 1 } else { broken += 1 }
            }
        }
        say("intact=\(intact) broken=\(broken)")
    } catch {
        fail("check failed: \(error)")
    }

case "open-rounds":
    // Opens a new cache in DIR/0, DIR/1, … and stores one value in each, starting round i at
    // wall-clock time START + i × 50 ms: two processes given the same START create each
    // index at the same moment.
    guard arguments.count > 4, let rounds = Int(arguments[3]), let start = Double(arguments[4]) else {
        fail("usage: open-rounds DIR ROUNDS START")
    }
    for round in 0..<rounds {
        let wait = start + Double(round) * 0.05 - Date().timeIntervalSince1970
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        do {
            let dir = directory.appendingPathComponent("\(round)")
            let cache = try DiskCache(directory: dir, configuration: configuration(seed: 1))
            try cache.store(Data("x".utf8), forKey: "probe")
            cache.close()
        } catch {
            fail("round \(round) failed: \(error)")
        }
    }
    say("ok")

case "open":
    do {
        let cache = try DiskCache(directory: directory, configuration: configuration(seed: seed))
        try cache.store(Data("x".utf8), forKey: "probe")
        say("ok")
    } catch let error as StashError {
        say("error=\(error.code) message=\(error.message)")
    } catch {
        say("error=other \(error)")
    }

case "stall-rebuild":
    // Opens a cache whose index must be rebuilt and stops in the middle of the rebuild (inside
    // its progress callback) so that the parent can kill it there.
    var configuration = DiskCache.Configuration(sizeLimit: .megabytes(10))
    configuration.onEvent = { event in
        guard case .rebuildingIndex = event else { return }
        say("rebuilding")
        while true { sleep(60) }
    }
    do {
        _ = try DiskCache(directory: directory, configuration: configuration)
        say("opened without stalling")
    } catch {
        say("error=\(error)")
    }

case "read-only":
    // Opens a cache this user cannot write; reports what reads see and what a write throws.
    do {
        let cache = try DiskCache(directory: directory, sizeLimit: .megabytes(10))
        say("readOnly=\(cache.isReadOnly) count=\(try cache.totalCount)")
        for key in try cache.allKeys.sorted() {
            let data = try cache.data(forKey: key)
            say("\(key) \(data.map { fnv1a($0) } ?? 0)")
        }
        say("healthy=\(try cache.verify().isHealthy)")
        do {
            try cache.store(Data("x".utf8), forKey: "probe")
            say("store=ok")
        } catch let error as StashError {
            say("store=\(error.code) message=\(error.message)")
        }
    } catch let error as StashError {
        say("error=\(error.code) message=\(error.message)")
    } catch {
        say("error=other \(error)")
    }

case "hit":
    guard arguments.count > 4, let count = Int(arguments[4]) else { fail("usage: hit DIR KEY COUNT") }
    do {
        let cache = try DiskCache(
            directory: directory,
            configuration: .init(
                countLimit: 4, lowWaterMark: 1.0, evictionPolicy: .leastRecentlyUsed, reclaimsOrphansOnOpen: false,
                accessFlushDelay: .seconds(3600)))
        for _ in 0..<count where try cache.data(forKey: arguments[3]) == nil { fail("hit: '\(arguments[3])' missed") }
        cache.close()
        say("ok")
    } catch {
        fail("hit failed: \(error)")
    }

case "wal-crash":
    guard arguments.count > 5, let flush = Int(arguments[4]), let tear = Double(arguments[5]) else {
        fail("usage: wal-crash DIR SEED FLUSH TEAR")
    }
    WALCrash.flushesLeft = flush
    WALCrash.tear = tear
    stash_vfs_set_flush_hook { event, bytes in
        if event == STASH_VFS_AFTER_WAL_WRITE { _exit(3) }
        WALCrash.flushesLeft -= 1
        guard WALCrash.flushesLeft <= 0 else { return bytes }
        return Int32(Double(bytes) * WALCrash.tear)
    }
    var generator = Generator(state: seed)
    do {
        // The commit-per-store mode: this mode tears the WAL write of one store's commit.
        var settings = configuration(seed: seed)
        settings.writeMode = .immediate
        let cache = try DiskCache(directory: directory, configuration: settings)
        while true {
            let key = "key-\(Int.random(in: 0..<50, using: &generator))"
            if Int.random(in: 0..<8, using: &generator) == 0 {
                say("removing \(key)")
                try cache.removeData(forKey: key)
                say("removed \(key)")
            } else {
                // Up to 20 000 bytes: inline values and files, and never enough to evict.
                let valueSeed = generator.next()
                say("storing \(key) \(valueSeed)")
                try cache.store(generate(Int.random(in: 8...20_000, using: &generator), seed: valueSeed), forKey: key)
                say("stored \(key) \(valueSeed)")
            }
        }
    } catch {
        fail("wal-crash: an operation failed before the crash point: \(error)")
    }

case "stage-one":
    // Stores one value under write-behind with a MILLIS-ms delay and never flushes: the parent
    // watches for it to appear in the index. Blocks until killed.
    let millis = arguments.count > 3 ? Int(arguments[3]) ?? 100 : 100
    do {
        let cache = try DiskCache(
            directory: directory,
            configuration: .init(sizeLimit: .megabytes(10), maxWriteDelay: .milliseconds(millis)))
        try cache.store(generate(100, seed: 42), forKey: "probe")
        say("stored")
        withExtendedLifetime(cache) {
            while true { sleep(60) }
        }
    } catch {
        fail("stage-one failed: \(error)")
    }

case "burst":
    // Stores ROUND's keys b<ROUND>-<step> (never overwritten) in bursts under write-behind, for
    // the SIGKILL loop (Benchmarks/crash-loop.sh): prints "stored S" after each store, "flushed S"
    // after every flush (each 64th store) and "pinned S" after each pinned store (each 97th),
    // which commits before it returns. Runs until killed.
    let round = arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0
    var generator = Generator(state: UInt64(round) &+ 1)
    do {
        let cache = try DiskCache(
            directory: directory,
            configuration: .init(sizeLimit: .gigabytes(2), inlineThreshold: .kibibytes(32)))
        var step = 0
        while true {
            step += 1
            let key = "b\(round)-\(step)"
            let size =
                Int.random(in: 0..<16, using: &generator) == 0
                ? 40_000 : Int.random(in: 8...2000, using: &generator)
            let pinned = step % 97 == 0
            try cache.store(generate(size, seed: generator.next()), forKey: key, pinned: pinned ? true : nil)
            say(pinned ? "pinned \(step)" : "stored \(step)")
            if step % 64 == 0 {
                try cache.flush()
                say("flushed \(step)")
            }
        }
    } catch {
        fail("burst failed: \(error)")
    }

case "burst-check":
    // After a kill of `burst`: every value intact; for ROUND, which keys up to LAST exist.
    // Prints "intact=I broken=B present=<steps of ROUND present, comma-separated ranges>".
    guard arguments.count > 4, let round = Int(arguments[3]), let last = Int(arguments[4]) else {
        fail("usage: burst-check DIR ROUND LAST")
    }
    do {
        let cache = try DiskCache(directory: directory, configuration: .init(sizeLimit: .gigabytes(2)))
        var intact = 0
        var broken = 0
        for key in try cache.allKeys {
            guard let value = try cache.data(forKey: key) else { continue }
            if isIntact(value) { intact += 1 } else { broken += 1 }
        }
        var missing: [Int] = []
        var present = 0
        for step in stride(from: 1, through: last, by: 1) {
            if try cache.containsData(forKey: "b\(round)-\(step)") { present += 1 } else { missing.append(step) }
        }
        // The kill leaves abandoned temporary files, which the reclaim started by the open
        // removes in the background: verify after it, or its dry run counts them as orphans
        // (once in 600 kills, on a fresh cache whose check finished first).
        cache.waitForBackgroundWork()
        let healthy = try cache.verify().isHealthy
        let missingList = missing.map(String.init).joined(separator: ",")
        say("intact=\(intact) broken=\(broken) present=\(present) healthy=\(healthy) missing=\(missingList)")
    } catch {
        fail("burst-check failed: \(error)")
    }

case "grow":
    growForever(directory: directory, round: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0)

case "grow-check":
    guard arguments.count > 3 else { fail("usage: grow-check DIR LOGDIR") }
    checkGrown(directory: directory, logDirectory: arguments[3])

case "memory-statistics":
    if arguments.count > 3, arguments[3] == "sqlite-first" { sqlite3_initialize() }
    do {
        let cache = try DiskCache(directory: directory)
        for i in 0..<100 { try cache.store(generate(1000, seed: UInt64(i)), forKey: "key-\(i)") }
        for i in 0..<100 where try cache.data(forKey: "key-\(i)") == nil { fail("memory-statistics: key-\(i) missed") }
        say("memory-used \(sqlite3_memory_used())")
        cache.close()
    } catch {
        fail("memory-statistics failed: \(error)")
    }

case "write-fixture":
    do {
        try writeMigrationFixture(into: directory)
        say("written")
    } catch {
        fail("write-fixture failed: \(error)")
    }

default:
    fail("unknown mode \(arguments[1])")
}

/// FNV-1a, 64 bits: a stable fingerprint of a value that the parent recomputes.
func fnv1a(_ data: Data) -> UInt64 {
    data.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}

/// The `wal-crash` mode's state, read by the VFS's hook (a C function pointer cannot capture).
enum WALCrash {
    nonisolated(unsafe) static var flushesLeft = 0
    nonisolated(unsafe) static var tear = 0.0
}
