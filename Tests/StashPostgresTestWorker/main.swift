#if Postgres
    import Foundation
    import Stash
    import StashPostgres

    // A second process for the PostgreSQL tests: `write URL TABLE WRITER COUNT` stores COUNT entries
    // `shared-0…` whose bodies depend on WRITER, so that two writers contest every key;
    // `stream URL TABLE SIZE DIR` round-trips a SIZE-byte body through the streaming API and reports
    // its resident memory (see Streaming.swift).

    func bytes(_ count: Int, seed: UInt64) -> Data {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for index in 0..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    let arguments = CommandLine.arguments
    if arguments.count == 6, arguments[1] == "stream", let size = Int(arguments[4]) {
        await streamRoundTrip(url: arguments[2], table: arguments[3], size: size, directory: arguments[5])
        exit(0)
    }
    guard arguments.count == 6, arguments[1] == "write", let writer = Int(arguments[4]), let count = Int(arguments[5])
    else {
        FileHandle.standardError.write(Data("usage: StashPostgresTestWorker write URL TABLE WRITER COUNT\n".utf8))
        exit(2)
    }
    do {
        let tier = try await PostgresSharedTier(
            url: arguments[2], configuration: .init(table: arguments[3], chunkSize: .bytes(16 * 1024)))
        for index in 0..<count {
            let body = bytes(40_000 + index * 997, seed: UInt64(writer * 1000 + index))
            try await tier.store(SharedEntry(key: "shared-\(index)", body: body))
        }
        tier.shutdown()
    } catch {
        FileHandle.standardError.write(Data("worker \(writer): \(error)\n".utf8))
        exit(1)
    }
#else
    import Foundation

    FileHandle.standardError.write(
        Data(
            "StashPostgresTestWorker was built without the Postgres trait: build it with `swift build --traits Postgres` (or --enable-all-traits).\n"
                .utf8))
    exit(2)
#endif
