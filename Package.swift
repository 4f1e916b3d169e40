// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Stash", targets: ["Stash"]),
        .library(name: "StashHTTP", targets: ["StashHTTP"]),
        .executable(name: "stash", targets: ["StashCLI"]),
        .library(name: "StashAsyncHTTPClient", targets: ["StashAsyncHTTPClient"]),
        .library(name: "StashMetrics", targets: ["StashMetrics"]),
        .library(name: "StashPostgres", targets: ["StashPostgres"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // A real HTTP server on 127.0.0.1: the origin of `stash demo`, and the tests' server.
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
        // NIO-based HTTP for servers: only StashAsyncHTTPClient (and the CLI) link it, never Stash.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // `swift package generate-documentation`; adds no code to any product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The shared tier on PostgreSQL (StashPostgres only; the core Stash product stays free of NIO).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "CStashVFS", dependencies: ["CSQLite"]),
        .target(
            name: "Stash",
            dependencies: ["CSQLite", "CStashVFS"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "StashHTTP",
            dependencies: ["Stash", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "StashCLI",
            dependencies: [
                "Stash", "StashHTTP", "StashPostgres",
                "StashAsyncHTTPClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "FlyingFox", package: "FlyingFox"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "StashBenchmarks",
            dependencies: ["Stash"]
        ),
        .executableTarget(
            name: "StashTestWorker",
            dependencies: ["Stash", "CSQLite", "CStashVFS"],
            path: "Tests/StashTestWorker"
        ),
        .testTarget(
            name: "StashTests",
            dependencies: ["Stash", "StashTestWorker"]
        ),
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
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "StashCLITests",
            dependencies: ["StashCLI", .product(name: "FlyingFox", package: "FlyingFox")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "StashAsyncHTTPClient",
            dependencies: [
                "Stash", "StashHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "StashMetrics",
            dependencies: [
                "Stash", "StashHTTP",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        // 300 downloads from a loopback origin with each transport; apart from StashBenchmarks so that
        // the disk benchmarks do not build async-http-client.
        .executableTarget(
            name: "StashTransportBenchmarks",
            dependencies: [
                "Stash", "StashHTTP", "StashAsyncHTTPClient", .product(name: "FlyingFox", package: "FlyingFox"),
            ]
        ),
        // The transport contract, run against URLSessionTransport and AsyncHTTPClientTransport. Its
        // Support folder is a link to StashHTTPTests' (the FlyingFox test server and fixtures).
        .testTarget(
            name: "StashTransportTests",
            dependencies: [
                "StashHTTP", "StashAsyncHTTPClient", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "StashMetricsTests",
            dependencies: [
                "StashMetrics", "StashHTTP", .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "FlyingFox", package: "FlyingFox"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .target(
            name: "StashPostgres",
            dependencies: [
                "Stash", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "StashPostgresTests",
            dependencies: [
                "StashPostgres", "StashHTTP", "StashPostgresTestWorker",
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "StashPostgresTestWorker",
            dependencies: ["StashPostgres"],
            path: "Tests/StashPostgresTestWorker"
        ),
        .executableTarget(
            name: "StashSharedBenchmarks",
            dependencies: [
                "StashPostgres", "StashHTTP", .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
