// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Stash",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Stash", targets: ["Stash"]),
        .executable(name: "stash-example", targets: ["StashExample"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "Stash",
            dependencies: ["CSQLite"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "StashExample",
            dependencies: ["Stash"],
            path: "Examples/StashExample"
        ),
        .executableTarget(
            name: "StashTestWorker",
            dependencies: ["Stash"],
            path: "Tests/StashTestWorker"
        ),
        .testTarget(
            name: "StashTests",
            dependencies: ["Stash", "StashTestWorker"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
