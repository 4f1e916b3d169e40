import Foundation
import Stash

/// The settings the migration fixture was written with, which the migration test opens it with.
enum MigrationFixture {
    /// 2026-11-26 00:00:00 UTC: every time in the fixture is this or a few seconds later.
    static let epoch = Date(timeIntervalSince1970: 1_795_651_200)

    /// A small limit, so that writing the fixture evicts and the policy keeps ghosts.
    static let sizeLimit = ByteCount.kibibytes(384)
}

/// Writes the migration fixture: inline and file values, pinned ones, a time-to-live, metadata,
/// hits (frequencies, queues), evictions (ghosts) and the frequency sketch, then closes the cache
/// so that everything is committed and the policy's state persisted.
///
/// Every value is `generate(size, seed)`, so a reader can check it without a copy.
func writeMigrationFixture(into directory: URL) throws {
    let ticks = LockedValue(0.0)
    let clock: @Sendable () -> Date = {
        ticks.withLock { tick in
            tick += 0.25
            return MigrationFixture.epoch.addingTimeInterval(tick)
        }
    }
    let cache = try DiskCache(
        directory: directory,
        configuration: .init(
            sizeLimit: MigrationFixture.sizeLimit, evictionPolicy: .adaptive, reclaimsOrphansOnOpen: false,
            clock: clock))
    for i in 0..<300 {
        let size = i % 25 == 7 ? 40_000 : 200 + (i * 37) % 1800
        try cache.store(generate(size, seed: UInt64(1000 + i)), forKey: "entry-\(i)")
        if i % 3 == 0, i >= 3 { _ = try cache.data(forKey: "entry-\(i - 3)") }
    }
    try cache.store(generate(900, seed: 1), forKey: "pinned-inline", pinned: true)
    try cache.store(generate(50_000, seed: 2), forKey: "pinned-file", pinned: true)
    try cache.store(generate(700, seed: 3), forKey: "ttl-inline", timeToLive: .seconds(86_400 * 3650))
    try cache.store(generate(45_000, seed: 4), forKey: "ttl-file", timeToLive: .seconds(86_400 * 3650))
    try cache.store(generate(64, seed: 5), forKey: "expired", timeToLive: .seconds(1))
    try cache.store(
        generate(1500, seed: 6), forKey: "metadata ünïcode/key?",
        metadata: .init(
            contentType: "image/png", etag: "\"v1\"", lastModified: "Wed, 25 Nov 2026 10:00:00 GMT",
            extra: ["vary": "accept", "x-origin": "fixture"]))
    for _ in 0..<5 { _ = try cache.data(forKey: "metadata ünïcode/key?") }
    cache.close()
}
