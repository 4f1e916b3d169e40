import Foundation
import Testing

@testable import Stash

/// Where value files go under `data/`: a two-level fan-out that grows with the cache, so that a
/// new cache's first stores do not each create a directory.
@Suite struct ValueFileLayoutTests {
    @Test func theFanOutUsesSixteenLeafDirectoriesPerStepUpToTwoHundredFiftySix() {
        // Every pair of leading digits, as random names have them.
        let digits = "0123456789abcdef".map(String.init)
        let names = digits.flatMap { a in digits.map { b in a + b + POSIXFile.randomName().dropFirst(2) } }
        func leaves(_ firstLevel: Int) -> Set<String> {
            Set(
                names.map { DiskCache.valueFileName($0, firstLevelDirectories: firstLevel) }.map { file in
                    let parts = file.split(separator: "/")
                    #expect(parts.count == 3 && parts[2].count == 32, "\(file)")
                    return parts.prefix(2).joined(separator: "/")
                })
        }
        #expect(leaves(1).count == 16)
        #expect(leaves(1).allSatisfy { $0.hasPrefix("0/") })
        #expect(leaves(3).count == 48)
        #expect(leaves(16).count == 256)
        #expect(leaves(99) == leaves(16))
        // The default is the full fan-out, where the name's first two digits are the directories.
        let name = names[0]
        #expect(DiskCache.valueFileName(name) == "\(name.prefix(1))/\(name.dropFirst().prefix(1))/\(name)")
    }

    @Test func aNewCacheStoresItsFirstFilesInSixteenDirectories() throws {
        try withTemporaryDirectory { dir in
            let cache = try DiskCache(directory: dir, sizeLimit: .megabytes(100))
            for i in 0..<64 { try cache.store(pattern(40_000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.flush()
            let data = dir.appendingPathComponent("data")
            let files = valueFilesBelow(data)
            #expect(files.count == 64)
            #expect(Set(files.map { $0.split(separator: "/")[0] }) == ["0"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: data.path) == ["0"])
            for i in 0..<64 { #expect(try cache.data(forKey: "k\(i)") == pattern(40_000, seed: UInt64(i))) }
            #expect(try cache.verify().isHealthy)
        }
    }

    @Test func theCommitPerStoreModeKeepsTheFullFanOut() throws {
        try withTemporaryDirectory { dir in
            var configuration = DiskCache.Configuration(sizeLimit: .megabytes(100))
            configuration.writeMode = .immediate
            let cache = try DiskCache(directory: dir, configuration: configuration)
            for i in 0..<64 { try cache.store(pattern(40_000, seed: UInt64(i)), forKey: "k\(i)") }
            // 64 random names all in one of 16 first-level directories: a chance of 16^-63.
            let files = valueFilesBelow(dir.appendingPathComponent("data"))
            #expect(files.count == 64)
            #expect(Set(files.map { $0.split(separator: "/")[0] }).count > 1)
        }
    }
}
