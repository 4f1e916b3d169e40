// swift-tools-version: 6.1
import PackageDescription

// An app that depends on `Stash` and `StashHTTP` resolves swift-log and nothing else. Everything that
// needs a server stack (SwiftNIO, PostgreSQL, async-http-client, swift-metrics, Hummingbird) or a tool
// (argument-parser, FlyingFox) is behind a package trait (SE-0450), off by default. A dependency used only
// under a disabled trait is left out of a dependent's graph; `scripts/check-app-graph` keeps it that way.
//
// A server enables what it needs on its dependency line:
//     .package(url: "https://github.com/stash-swift/stash", from: "1.0.0", traits: ["Postgres"])
// At the root, `swift build --enable-all-traits` builds every product and `swift test --enable-all-traits`
// runs every test.

/// Shorthand for a product that only a trait's targets use.
func product(_ name: String, _ package: String, when traits: Set<String>) -> Target.Dependency {
    .product(name: name, package: package, condition: .when(traits: traits))
}

let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

// The manifest is evaluated on the host, and only a Linux host builds for Linux: a Mac that builds for
// macOS or iOS leaves pkg-config out (see CSQLite below).
#if os(Linux)
    let sqlitePkgConfig: String? = "sqlite3"
#else
    let sqlitePkgConfig: String? = nil
#endif

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Stash", targets: ["Stash"]),
        .library(name: "StashHTTP", targets: ["StashHTTP"]),
        .library(name: "StashAsyncHTTPClient", targets: ["StashAsyncHTTPClient"]),
        .library(name: "StashMetrics", targets: ["StashMetrics"]),
        .library(name: "StashPostgres", targets: ["StashPostgres"]),
        .library(name: "StashServer", targets: ["StashServer"]),
        .executable(name: "stash", targets: ["StashCLI"]),
    ],
    traits: [
        .trait(name: "Postgres", description: "StashPostgres: the shared tier on PostgreSQL (postgres-nio)."),
        .trait(
            name: "AsyncHTTPClient",
            description: "StashAsyncHTTPClient: ResourceLoader's transport on async-http-client (SwiftNIO)."
        ),
        .trait(name: "Metrics", description: "StashMetrics: cache and loader statistics through swift-metrics."),
        .trait(
            name: "Tool",
            description: "The `stash` command-line tool and its demo (argument-parser, FlyingFox).",
            enabledTraits: ["Postgres", "AsyncHTTPClient"]
        ),
        .trait(
            name: "Serve",
            description: "StashServer and `stash serve`: the caching reverse proxy (SwiftNIO, swift-prometheus).",
            enabledTraits: ["Tool", "Metrics"]
        ),
        .trait(
            name: "Benchmarks",
            description: "The benchmark executables that need a server stack (transports, the shared tier).",
            enabledTraits: ["Postgres", "AsyncHTTPClient"]
        ),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // A real HTTP server on 127.0.0.1: the origin of `stash demo`, and the tests' server.
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // `swift package generate-documentation`; adds no code to any product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Prometheus exposition for `stash serve`'s /metrics (and the documentation's samples).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // SQLite: the module map links libsqlite3. On Apple platforms that is the SDK's (its header and
        // its library, right for every platform an app builds for): no pkg-config and no Homebrew,
        // whose macOS-only dylib would break an iOS build. On Linux, pkg-config finds the distribution's.
        .systemLibrary(name: "CSQLite", pkgConfig: sqlitePkgConfig, providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CStashVFS", dependencies: ["CSQLite"]),
        .target(name: "Stash", dependencies: ["CSQLite", "CStashVFS"], swiftSettings: strict),
        .target(
            name: "StashHTTP",
            dependencies: ["Stash", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),

        // Server products: each compiles to an empty module unless its trait is enabled.
        .target(
            name: "StashAsyncHTTPClient",
            dependencies: [
                "Stash", "StashHTTP",
                product("AsyncHTTPClient", "async-http-client", when: ["AsyncHTTPClient"]),
                product("NIOCore", "swift-nio", when: ["AsyncHTTPClient"]),
                product("NIOHTTP1", "swift-nio", when: ["AsyncHTTPClient"]),
                product("NIOPosix", "swift-nio", when: ["AsyncHTTPClient"]),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "StashMetrics",
            dependencies: ["Stash", "StashHTTP", product("CoreMetrics", "swift-metrics", when: ["Metrics"])],
            swiftSettings: strict
        ),
        .target(
            name: "StashPostgres",
            dependencies: [
                "Stash", product("PostgresNIO", "postgres-nio", when: ["Postgres"]),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        .target(
            name: "StashServer",
            dependencies: [
                "Stash", "StashHTTP", .product(name: "Logging", package: "swift-log"),
                product("NIOCore", "swift-nio", when: ["Serve"]),
                product("NIOPosix", "swift-nio", when: ["Serve"]),
                product("NIOHTTP1", "swift-nio", when: ["Serve"]),
                product("AsyncHTTPClient", "async-http-client", when: ["Serve"]),
                product("CoreMetrics", "swift-metrics", when: ["Serve"]),
                product("Prometheus", "swift-prometheus", when: ["Serve"]),
            ],
            swiftSettings: strict
        ),

        // The `stash` tool: without the Tool trait it only says how to build it.
        .executableTarget(
            name: "StashCLI",
            dependencies: [
                "Stash", "StashHTTP", "StashPostgres", "StashAsyncHTTPClient",
                product("ArgumentParser", "swift-argument-parser", when: ["Tool"]),
                product("FlyingFox", "FlyingFox", when: ["Tool"]),
                .target(name: "StashServer", condition: .when(traits: ["Serve"])),
            ],
            swiftSettings: strict
        ),

        // Benchmarks. StashBenchmarks needs only Stash; the others need the server stack.
        .executableTarget(name: "StashBenchmarks", dependencies: ["Stash", "StashHTTP"]),
        // The floor of an HTTP relay on SwiftNIO, for Benchmarks/serve-miss-cpu.sh (`nio-relay`).
        .executableTarget(
            name: "StashRelayFloor",
            dependencies: [
                "Stash",
                product("NIOCore", "swift-nio", when: ["Serve"]), product("NIOPosix", "swift-nio", when: ["Serve"]),
                product("NIOHTTP1", "swift-nio", when: ["Serve"]),
            ],
            path: "Benchmarks/floor/nio-relay"
        ),
        // 300 downloads from a loopback origin with each transport.
        .executableTarget(
            name: "StashTransportBenchmarks",
            dependencies: [
                "Stash", "StashHTTP", "StashAsyncHTTPClient",
                product("FlyingFox", "FlyingFox", when: ["Benchmarks"]),
            ]
        ),
        .executableTarget(
            name: "StashSharedBenchmarks",
            dependencies: [
                "StashPostgres", "StashHTTP",
                product("FlyingFox", "FlyingFox", when: ["Benchmarks"]),
                .product(name: "Logging", package: "swift-log"),
                product("PostgresNIO", "postgres-nio", when: ["Benchmarks"]),
            ]
        ),

        // Tests. A test target's dependencies never reach a dependent's graph; the heavy ones are still
        // conditional so that `swift test` without traits builds no server stack.
        .executableTarget(
            name: "StashTestWorker",
            dependencies: ["Stash", "CSQLite", "CStashVFS"],
            path: "Tests/StashTestWorker"
        ),
        .testTarget(name: "StashTests", dependencies: ["Stash", "StashTestWorker"], exclude: ["Fixtures"]),
        .executableTarget(
            name: "StashHTTPTestWorker",
            dependencies: ["StashHTTP"],
            path: "Tests/StashHTTPTestWorker"
        ),
        .testTarget(
            name: "StashHTTPTests",
            dependencies: [
                "StashHTTP", "StashHTTPTestWorker", .product(name: "FlyingFox", package: "FlyingFox"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StashCLITests",
            dependencies: ["StashCLI", .product(name: "FlyingFox", package: "FlyingFox")],
            swiftSettings: strict
        ),
        // The transport contract, run against URLSessionTransport and AsyncHTTPClientTransport. Its
        // Support folder is a link to StashHTTPTests' (the FlyingFox test server and fixtures).
        .testTarget(
            name: "StashTransportTests",
            dependencies: [
                "StashHTTP", "StashAsyncHTTPClient", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "StashMetricsTests",
            dependencies: [
                "StashMetrics", "StashHTTP", product("MetricsTestKit", "swift-metrics", when: ["Metrics"]),
                .product(name: "FlyingFox", package: "FlyingFox"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "StashPostgresTestWorker",
            dependencies: ["StashPostgres"],
            path: "Tests/StashPostgresTestWorker"
        ),
        .testTarget(
            name: "StashPostgresTests",
            dependencies: [
                "StashPostgres", "StashHTTP", "StashPostgresTestWorker",
                .product(name: "FlyingFox", package: "FlyingFox"),
                product("PostgresNIO", "postgres-nio", when: ["Postgres"]),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Every Swift sample of the README and the DocC articles, written here by scripts/extract-samples:
        // compiled by `swift test --enable-all-traits`, never run.
        .testTarget(
            name: "DocSamplesTests",
            dependencies: [
                "Stash", "StashHTTP", "StashPostgres", "StashAsyncHTTPClient", "StashMetrics", "StashServer",
                product("AsyncHTTPClient", "async-http-client", when: ["AsyncHTTPClient"]),
                product("Metrics", "swift-metrics", when: ["Metrics"]),
                product("Prometheus", "swift-prometheus", when: ["Metrics"]),
            ],
            swiftSettings: [.unsafeFlags(["-suppress-warnings"])]
        ),
        .testTarget(
            name: "StashServerTests",
            dependencies: [
                "StashServer", "StashCLI", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
