// swift-tools-version: 6.1
// The checker's self-test (not a package that builds): each line the checker must report is marked
// "flagged"; Expected.txt holds the report.
import PackageDescription

let package = Package(
    name: "Fixture",
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",  // flagged
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]  // flagged
        )
    ]
)
