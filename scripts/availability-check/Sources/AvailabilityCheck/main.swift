import Foundation
import SwiftParser
import SwiftSyntax

// Reads the package's Swift files and its manifest and prints what breaks an Apple build (or a Linux one)
// although Linux compiles it: see Rules.swift for the classes. Exits 1 when it finds any.
//
//     AvailabilityCheck [ROOT]     ROOT defaults to the current directory; it reads ROOT/Sources, ROOT/Tests
//                                  and ROOT/Package.swift

let root = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? FileManager.default.currentDirectoryPath)
    .standardizedFileURL

func swiftFiles(under folder: String) -> [String] {
    let base = root.appendingPathComponent(folder)
    guard let enumerator = FileManager.default.enumerator(atPath: base.path) else { return [] }
    var files: [String] = []
    while let relative = enumerator.nextObject() as? String {
        guard relative.hasSuffix(".swift") else { continue }
        let full = base.appendingPathComponent(relative)
        // A file shared through a symbolic link (to it or to its folder) is read once, where it lives.
        if full.resolvingSymlinksInPath().path == full.path { files.append(folder + "/" + relative) }
    }
    return files.sorted()
}

var findings: [Finding] = []
var fileCount = 0
for path in swiftFiles(under: "Sources") + swiftFiles(under: "Tests") {
    guard let text = try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) else { continue }
    let tree = Parser.parse(source: text)
    let checker = Checker(path: path, tree: tree, isTest: path.hasPrefix("Tests/"))
    checker.walk(tree)
    findings += checker.findings
    fileCount += 1
}
if let manifest = try? String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8) {
    findings += checkManifest(Parser.parse(source: manifest), path: "Package.swift")
    fileCount += 1
}

for finding in findings.sorted() { print(finding.description) }
if findings.isEmpty {
    print("check-apple-platforms: \(fileCount) files, no findings")
} else {
    let counts = Dictionary(grouping: findings, by: \.rule).map { "\($0.value.count) \($0.key)" }.sorted()
    print("check-apple-platforms: \(findings.count) findings in \(fileCount) files (\(counts.joined(separator: ", ")))")
    exit(1)
}
