import SwiftSyntax

/// Checks Package.swift's `CSQLite`: an Apple build must link the SDK's SQLite, so neither Homebrew nor
/// pkg-config (which finds Homebrew's macOS-only library) may be in its way there.
func checkManifest(_ tree: SourceFileSyntax, path: String) -> [Finding] {
    let converter = SourceLocationConverter(fileName: path, tree: tree)
    var findings: [Finding] = []
    func report(_ node: some SyntaxProtocol, _ message: String) {
        let location = node.startLocation(converter: converter)
        findings.append(
            Finding(path: path, line: location.line, column: location.column, rule: Rule.sqlite, message: message))
    }
    let calls = Collector<FunctionCallExprSyntax>(viewMode: .sourceAccurate)
    calls.walk(tree)
    let variables = Collector<PatternBindingSyntax>(viewMode: .sourceAccurate)
    variables.walk(tree)
    for call in calls.found {
        guard call.calledExpression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "systemLibrary",
            call.arguments.contains(where: {
                $0.label?.text == "name" && $0.expression.trimmedDescription == "\"CSQLite\""
            })
        else { continue }
        for argument in call.arguments {
            if argument.label?.text == "providers",
                argument.expression.tokens(viewMode: .sourceAccurate).contains(where: { $0.text == "brew" })
            {
                report(
                    argument,
                    "CSQLite names a Homebrew provider: on a Mac that has it, SwiftPM links Homebrew's "
                        + "macOS-only libsqlite3 and an iOS build fails; Apple builds use the SDK's")
            }
            guard argument.label?.text == "pkgConfig" else { continue }
            if argument.expression.is(StringLiteralExprSyntax.self) {
                report(
                    argument,
                    "CSQLite's pkgConfig applies on every host: on a Mac it finds Homebrew's sqlite3.pc; "
                        + "give it only where the manifest is evaluated on Linux (#if os(Linux))")
            } else if let name = argument.expression.as(DeclReferenceExprSyntax.self)?.baseName.text {
                for binding in variables.found where binding.pattern.trimmedDescription == name {
                    let value = binding.initializer?.value
                    if value?.is(StringLiteralExprSyntax.self) == true, platforms(of: binding).contains(.apple) {
                        report(
                            binding,
                            "CSQLite's pkgConfig (\(name)) is set where a Mac evaluates the manifest: "
                                + "set it under #if os(Linux) only")
                    }
                }
            }
        }
    }
    return findings
}

/// Every node of one kind in a tree.
final class Collector<Node: SyntaxProtocol>: SyntaxAnyVisitor {
    var found: [Node] = []
    override func visitAny(_ node: Syntax) -> SyntaxVisitorContinueKind {
        if let match = node.as(Node.self) { found.append(match) }
        return .visitChildren
    }
}
