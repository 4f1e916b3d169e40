// The floor of an HTTP relay on SwiftNIO: what any proxy built on SwiftNIO's HTTP/1.1 codec pays per
// request before it caches anything. It accepts clients, gives each client connection one keep-alive
// connection to the origin on the same event loop (no thread hand-off, no pool, no lookup), decodes
// each request and response with NIOHTTP1 and encodes them again.
//
//   StashRelayFloor LISTEN-PORT ORIGIN-PORT [--store DIR | --files DIR] [--on-loop]
//
// Both ports are on 127.0.0.1; one event loop per core. Without an option it stores nothing. With an
// option it collects each response's body in one buffer as it relays it (the one copy a store
// needs), and keeps that buffer as it is, with no second copy:
//
// * `--store DIR`: in a `DiskCache` in DIR, configured as `stash serve` configures its disk tier (a
//   2 GiB size limit, the defaults otherwise), with the head's fields as metadata; staged on the event
//   loop when that needs no wait (`storeWithoutWaiting`), else stored on a thread pool, as `stash
//   serve` stores a miss. No lookup before the miss, no memory tier, no policy: the least a proxy on
//   Stash's disk tier does per miss.
// * `--files DIR`: the head and body written to a temporary file on the thread pool and renamed into
//   a two-level fan-out under DIR, as nginx's `proxy_cache` does: the same relay storing without an
//   index.
// * `--on-loop` (after either): the store runs on the event loop that relayed the response, blocking
//   it, as nginx's workers write their cache files.
//
// Benchmarks/serve-miss-cpu.sh runs these as `nio-relay`, `nio-relay-store` and `nio-relay-files`
// beside `stash serve` and nginx. It serves one request at a time per connection (no pipelining) and
// forwards without back-pressure: enough for a pass of GETs of bodies up to 512 KiB, not a proxy for
// anything else.
#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOPosix
    import Stash

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Where relayed responses are kept, if anywhere.
    enum Storage {
        case none
        case diskCache(DiskCache, NIOThreadPool?)
        case files(String, NIOThreadPool?)

        /// Whether responses are kept at all.
        var keeps: Bool {
            if case .none = self { return false }
            return true
        }

        /// Keeps `body` (with `head`'s fields) under `key`; a failure ends the process, as a floor
        /// that silently stored nothing would measure nothing.
        func keep(head: HTTPResponseHead, body: Data, key: String) {
            switch self {
            case .none:
                return
            case .diskCache(let cache, let pool):
                var fields: [String: String] = ["status": String(head.status.code)]
                for (name, value) in head.headers { fields[name.lowercased()] = value }
                let metadata = DiskCache.Metadata(
                    contentType: head.headers.first(name: "content-type"), etag: head.headers.first(name: "etag"),
                    lastModified: head.headers.first(name: "last-modified"), extra: fields)
                do {
                    if try cache.storeWithoutWaiting(body, forKey: key, metadata: metadata) { return }
                } catch {
                    fatalError("could not stage \(key): \(error)")
                }
                let store: @Sendable () -> Void = {
                    do { try cache.store(body, forKey: key, metadata: metadata) } catch {
                        fatalError("could not store \(key): \(error)")
                    }
                }
                if let pool { pool.submit { _ in store() } } else { store() }
            case .files(let directory, let pool):
                var text = "HTTP/1.1 \(head.status.code)\r\n"
                for (name, value) in head.headers { text += "\(name): \(value)\r\n" }
                text += "\r\n"
                let headBytes = Data(text.utf8)
                guard let pool else {
                    return Self.writeFile(directory: directory, key: key, head: headBytes, body: body)
                }
                pool.submit { _ in Self.writeFile(directory: directory, key: key, head: headBytes, body: body) }
            }
        }

        /// Writes a temporary file and renames it to `directory/x/yz/<hash>`, creating the
        /// directories on first use.
        private static func writeFile(directory: String, key: String, head: Data, body: Data) {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            let name = String(hash, radix: 16)
            let last = name.suffix(3)
            let subdirectory = "\(directory)/cache/\(last.suffix(1))/\(last.prefix(2))"
            let temporary = "\(directory)/temp/\(name).\(UInt64.random(in: 0...UInt64.max))"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { fatalError("could not create \(temporary): errno \(errno)") }
            for bytes in [head, body] {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written == bytes.count else { fatalError("could not write \(temporary)") }
            }
            close(descriptor)
            let target = "\(subdirectory)/\(name)"
            if rename(temporary, target) != 0 {
                mkdir("\(directory)/cache/\(last.suffix(1))", 0o700)
                mkdir(subdirectory, 0o700)
                guard rename(temporary, target) == 0 else { fatalError("could not rename to \(target)") }
            }
        }
    }

    /// The origin's side of one client connection: its response parts go to the client as they come.
    final class OriginSide: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        private let client: any Channel
        private let storage: Storage
        /// The targets of the requests sent and not yet answered, oldest first.
        var targets: [String] = []
        private var head: HTTPResponseHead?
        /// The body collected as it is relayed (the one copy a store needs; the store and the file
        /// writes take it as it is).
        private var body = Data()

        init(client: any Channel, storage: Storage) {
            self.client = client
            self.storage = storage
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                client.write(HTTPServerResponsePart.head(head), promise: nil)
                if storage.keeps {
                    self.head = head
                    body = Data(capacity: head.headers.first(name: "content-length").flatMap { Int($0) } ?? 0)
                }
            case .body(let bytes):
                if self.head != nil {
                    bytes.withUnsafeReadableBytes { body.append($0.assumingMemoryBound(to: UInt8.self)) }
                }
                client.write(HTTPServerResponsePart.body(.byteBuffer(bytes)), promise: nil)
            case .end:
                client.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
                if let head {
                    let target = targets.removeFirst()
                    storage.keep(head: head, body: body, key: target)
                    self.head = nil
                    body = Data()
                }
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) { client.flush() }

        func channelInactive(context: ChannelHandlerContext) { client.close(promise: nil) }
    }

    /// One client connection: its requests go to its own origin connection, opened at its first.
    final class ClientSide: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        private let originPort: Int
        private let storage: Storage
        private var origin: (any Channel)?
        private var originSide: OriginSide?
        private var waiting: [HTTPClientRequestPart] = []
        private var connecting = false

        init(originPort: Int, storage: Storage) {
            self.originPort = originPort
            self.storage = storage
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let part: HTTPClientRequestPart
            switch unwrapInboundIn(data) {
            case .head(var head):
                head.headers.replaceOrAdd(name: "Host", value: "127.0.0.1:\(originPort)")
                part = .head(head)
            case .body(let bytes):
                part = .body(.byteBuffer(bytes))
            case .end(let trailers):
                part = .end(trailers)
            }
            if storage.keeps, case .head(let head) = part {
                if let originSide { originSide.targets.append(head.uri) } else { pendingTargets.append(head.uri) }
            }
            if let origin {
                origin.write(part, promise: nil)
                if case .end = part { origin.flush() }
                return
            }
            waiting.append(part)
            guard !connecting else { return }
            connecting = true
            let client = context.channel
            let storage = storage
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            ClientBootstrap(group: context.eventLoop)
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        let side = OriginSide(client: client, storage: storage)
                        side.targets = loopBound.value.pendingTargets
                        loopBound.value.pendingTargets = []
                        loopBound.value.originSide = side
                        try channel.pipeline.syncOperations.addHandler(side)
                    }
                }
                .connect(host: "127.0.0.1", port: originPort)
                .whenComplete { result in
                    let side = loopBound.value
                    switch result {
                    case .success(let channel):
                        side.origin = channel
                        for part in side.waiting { channel.write(part, promise: nil) }
                        side.waiting = []
                        channel.flush()
                    case .failure:
                        client.close(promise: nil)
                    }
                }
        }

        private var pendingTargets: [String] = []

        func channelInactive(context: ChannelHandlerContext) { origin?.close(promise: nil) }
    }

    let arguments = CommandLine.arguments
    let onLoop = arguments.last == "--on-loop"
    let usage = "usage: StashRelayFloor LISTEN-PORT ORIGIN-PORT [--store DIR | --files DIR] [--on-loop]"
    guard [3, 5, 6].contains(arguments.count), arguments.count != 6 || onLoop, let listenPort = Int(arguments[1]),
        let originPort = Int(arguments[2])
    else {
        print(usage)
        exit(2)
    }
    let storage: Storage
    if arguments.count >= 5 {
        let pool = onLoop ? nil : NIOThreadPool(numberOfThreads: System.coreCount)
        pool?.start()
        switch arguments[3] {
        case "--store":
            storage = .diskCache(
                try DiskCache(
                    directory: URL(fileURLWithPath: arguments[4]),
                    configuration: DiskCache.Configuration(sizeLimit: .gibibytes(2))),
                pool)
        case "--files":
            try FileManager.default.createDirectory(
                atPath: arguments[4] + "/temp", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                atPath: arguments[4] + "/cache", withIntermediateDirectories: true)
            storage = .files(arguments[4], pool)
        default:
            print(usage)
            exit(2)
        }
    } else {
        storage = .none
    }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    let server = try ServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.backlog, value: 1024)
        .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                try channel.pipeline.syncOperations.addHandler(ClientSide(originPort: originPort, storage: storage))
            }
        }
        .bind(host: "127.0.0.1", port: listenPort).wait()
    try server.closeFuture.wait()
#else
    print("StashRelayFloor needs the Serve trait (SwiftNIO): swift build --traits Serve --product StashRelayFloor")
#endif
