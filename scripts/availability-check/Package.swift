// swift-tools-version: 6.1
import PackageDescription

// scripts/check-apple-platforms' checker: reads the package's Swift files with swift-syntax and reports the
// code that breaks an Apple build (or a Linux one) although Linux compiles it. A package of its own, so that
// swift-syntax never enters Stash's graph.
let package = Package(
    name: "AvailabilityCheck",
    platforms: [.macOS(.v13)],
    dependencies: [.package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1")],
    targets: [
        .executableTarget(
            name: "AvailabilityCheck",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
