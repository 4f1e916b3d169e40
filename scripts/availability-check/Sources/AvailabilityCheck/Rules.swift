import SwiftSyntax

/// One problem found: where, which class, and why.
struct Finding: Comparable {
    var path: String
    var line: Int
    var column: Int
    var rule: String
    var message: String

    static func < (a: Finding, b: Finding) -> Bool { (a.path, a.line, a.column) < (b.path, b.line, b.column) }
    var description: String { "\(path):\(line):\(column): [\(rule)] \(message)" }
}

/// The rules' classes, as printed.
enum Rule {
    /// Swift 6 runtime and library API outside code limited to macOS 15 / iOS 18 (issue 41, items 1 and 2).
    static let swift6 = "needs-macOS15"
    /// Linux-only calls, paths and types reachable on Apple platforms (item 5).
    static let linuxOnly = "linux-only"
    /// Apple-only API reachable on Linux.
    static let appleOnly = "apple-only"
    /// A value type a cache would hold that is not Sendable on the package's Apple releases (item 4).
    static let notSendable = "not-sendable"
    /// `fsync` alone on Apple platforms, where it does not flush the drive's cache (item 6).
    static let durability = "durability"
    /// The SQLite that Apple builds would link (item 3).
    static let sqlite = "sqlite-link"
}

/// Functions, constants and types of Linux (or glibc) that Apple's SDKs lack or declare otherwise.
let linuxOnlySymbols: [String: String] = [
    "mount": "Linux's mount(2) (five arguments; Darwin's has four and no tmpfs)",
    "umount": "Linux's umount(2) (Darwin has unmount(2))",
    "umount2": "Linux's umount2(2)",
    "MNT_DETACH": "Linux's MNT_DETACH",
    "MNT_FORCE": "Linux's MNT_FORCE",
    "SYS_futex": "the futex system call",
    "FUTEX_WAIT_PRIVATE": "the futex system call",
    "FUTEX_WAKE_PRIVATE": "the futex system call",
    "stash_futex_wait": "the futex system call (CStashVFS declares it on Linux only)",
    "stash_futex_wake_one": "the futex system call (CStashVFS declares it on Linux only)",
    "epoll_create1": "epoll", "epoll_ctl": "epoll", "epoll_wait": "epoll", "epoll_event": "epoll",
    "eventfd": "eventfd(2)", "inotify_init1": "inotify", "inotify_add_watch": "inotify",
    "sched_getaffinity": "sched_getaffinity(2)", "cpu_set_t": "glibc's cpu_set_t",
    "O_TMPFILE": "Linux's O_TMPFILE", "O_DIRECT": "Linux's O_DIRECT", "fallocate": "Linux's fallocate(2)",
    "PTHREAD_MUTEX_ADAPTIVE_NP": "glibc's adaptive mutex", "memfd_create": "memfd_create(2)",
    "statx": "Linux's statx(2)", "copy_file_range": "copy_file_range(2)", "syncfs": "syncfs(2)",
    "prctl": "prctl(2)", "TMPFS_MAGIC": "Linux's statfs magic numbers",
]

/// Apple-only API (beyond importing an Apple-only module).
let appleOnlySymbols: Set<String> = [
    "F_FULLFSYNC", "F_BARRIERFSYNC", "F_NOCACHE", "F_GETPATH", "os_unfair_lock", "os_unfair_lock_lock",
    "os_unfair_lock_unlock", "UIImage", "NSImage", "UIApplication", "NSApplication", "UIView", "NSView",
    "CGImage", "CGContext", "NSBitmapImageRep", "makeMemoryPressureSource",
]
let appleOnlyPrefixes = ["kCGImage", "CGImageSource", "CGImageDestination", "os_unfair_lock", "UIGraphics"]

/// Swift 6 additions of the Synchronization module.
let synchronizationTypes: Set<String> = ["Mutex", "Atomic", "AtomicLazyReference", "WordPair"]

/// Walks one file and records what the rules find.
final class Checker: SyntaxVisitor {
    let path: String
    let converter: SourceLocationConverter
    /// Whether the file is a test's (Tests/): where `CommandLine.arguments[0]` names the test runner on Apple platforms.
    let isTest: Bool
    /// Whether the file imports Synchronization where an Apple build sees the import.
    var importsSynchronizationOnApple = false
    /// Type names the file declares itself (its own `Mutex` is not Synchronization's).
    var declaredNames = Set<String>()
    var findings: [Finding] = []

    init(path: String, tree: SourceFileSyntax, isTest: Bool) {
        self.path = path
        self.isTest = isTest
        converter = SourceLocationConverter(fileName: path, tree: tree)
        super.init(viewMode: .sourceAccurate)
        let prepass = PrePass(viewMode: .sourceAccurate)
        prepass.walk(tree)
        importsSynchronizationOnApple = prepass.synchronizationImports.contains { platforms(of: $0).contains(.apple) }
        declaredNames = prepass.declaredNames
    }

    func report(_ node: some SyntaxProtocol, _ rule: String, _ message: String) {
        let location = node.startLocation(converter: converter)
        findings.append(Finding(path: path, line: location.line, column: location.column, rule: rule, message: message))
    }

    var onApple: (Syntax) -> Bool = { platforms(of: $0).contains(.apple) }
    var onLinux: (Syntax) -> Bool = { platforms(of: $0).contains(.linux) }

    /// Reports `message` unless the node is compiled only where it is fine: off Apple platforms,
    /// or inside code limited to the Swift 6 releases.
    func requireSwift6(_ node: some SyntaxProtocol, _ message: String) {
        guard onApple(Syntax(node)), !isInSwift6Scope(node) else { return }
        report(
            node, Rule.swift6,
            message + ": needs macOS 15 / iOS 18; put it under @available or #available "
                + "for \(swift6Releases.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")), or use an older API"
        )
    }

    override func visit(_ node: ImportDeclSyntax) -> SyntaxVisitorContinueKind {
        let module = node.path.first?.name.text ?? ""
        if module == "Glibc", onApple(Syntax(node)) {
            report(node, Rule.linuxOnly, "import Glibc where an Apple build sees it: put it under #if canImport(Glibc)")
        }
        if appleModules.contains(module), onLinux(Syntax(node)) {
            report(
                node, Rule.appleOnly,
                "import \(module) where a Linux build sees it: put it under #if canImport(\(module))")
        }
        return .skipChildren
    }

    override func visit(_ node: IdentifierTypeSyntax) -> SyntaxVisitorContinueKind {
        let name = node.name.text
        if ["AsyncSequence", "AsyncIteratorProtocol"].contains(name), node.genericArgumentClause != nil {
            requireSwift6(node, "\(node.trimmedDescription) names the primary associated type Failure")
        }
        check(name: name, node)
        if name == "NSImage", isHeldValue(node) {
            report(
                node, Rule.notSendable,
                "NSImage as a value that a cache or codec holds: NSImage is not Sendable on macOS 13 (Cache and "
                    + "ValueLoader need Sendable values); hold a CGImage or bytes instead")
        }
        return .visitChildren
    }

    override func visit(_ node: MemberTypeSyntax) -> SyntaxVisitorContinueKind {
        if node.name.text == "Failure", node.baseType.as(IdentifierTypeSyntax.self)?.name.text != "Result" {
            requireSwift6(node, "\(node.trimmedDescription): the Failure of AsyncSequence/AsyncIteratorProtocol")
        }
        return .visitChildren
    }

    override func visit(_ node: FunctionTypeSyntax) -> SyntaxVisitorContinueKind {
        if let thrown = node.effectSpecifiers?.throwsClause?.type,
            !["any Error", "Error", "Never"].contains(thrown.trimmedDescription)
        {
            requireSwift6(node, "a function type with typed throws (\(thrown.trimmedDescription))")
        }
        return .visitChildren
    }

    override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
        // `x.mount` is the member of something else; `mount(...)` and `MNT_DETACH` are the C names.
        if let member = node.parent?.as(MemberAccessExprSyntax.self), member.declName.id == node.id {
            if member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text == "Glibc", onApple(Syntax(node)) {
                report(
                    member, Rule.linuxOnly, "\(member.trimmedDescription) is glibc's: put it under #if canImport(Glibc)"
                )
            }
            if node.baseName.text == "rawValue",
                ["SOCK_STREAM", "SOCK_DGRAM", "SOCK_SEQPACKET"].contains(
                    member.base?.as(DeclReferenceExprSyntax.self)?.baseName.text ?? ""),
                onApple(Syntax(node))
            {
                report(
                    member, Rule.linuxOnly,
                    "\(member.trimmedDescription): glibc's socket types are enums, Darwin's Int32")
            }
            if node.baseName.text == "makeMemoryPressureSource", onLinux(Syntax(node)) {
                report(member, Rule.appleOnly, "DispatchSource.makeMemoryPressureSource does not exist on Linux")
            }
            if node.baseName.text == "next", isIsolationCall(member) {
                requireSwift6(member, "next(isolation:)")
            }
            return .visitChildren
        }
        check(name: node.baseName.text, node)
        if node.baseName.text == "fsync", node.parent?.is(FunctionCallExprSyntax.self) == true, onApple(Syntax(node)),
            !enclosingFunctionMentions(node, "F_FULLFSYNC")
        {
            report(
                node, Rule.durability,
                "fsync alone on Apple platforms leaves the data in the drive's cache: try fcntl(fd, F_FULLFSYNC) first")
        }
        return .visitChildren
    }

    override func visit(_ node: StringLiteralExprSyntax) -> SyntaxVisitorContinueKind {
        guard let first = node.segments.first?.as(StringSegmentSyntax.self)?.content.text else { return .visitChildren }
        if first.hasPrefix("/proc/") || first == "/proc" || first.hasPrefix("/sys/fs/cgroup"), !isAppended(node),
            onApple(Syntax(node))
        {
            report(
                node, Rule.linuxOnly,
                "\"\(first)…\" is a Linux path: read it under #if os(Linux) (and mark a test that needs it Linux-only)")
        }
        return .visitChildren
    }

    override func visit(_ node: SubscriptCallExprSyntax) -> SyntaxVisitorContinueKind {
        if isTest, node.calledExpression.trimmedDescription == "CommandLine.arguments",
            node.arguments.first?.expression.trimmedDescription == "0", onApple(Syntax(node))
        {
            report(
                node, Rule.linuxOnly,
                "CommandLine.arguments[0] in a test names the test runner on Apple platforms (the tests run in an "
                    + ".xctest bundle): find the products directory through the bundle (Tests/StashTests/Support/BuildProducts.swift)"
            )
        }
        return .visitChildren
    }

    /// The checks on a bare name, as a type or an expression.
    private func check(name: String, _ node: some SyntaxProtocol) {
        if synchronizationTypes.contains(name), importsSynchronizationOnApple, !declaredNames.contains(name) {
            requireSwift6(node, "Synchronization.\(name)")
        }
        // A lowercase name is a function (`mount` may as well be a variable): only a call counts.
        let isCall = node.parent?.as(FunctionCallExprSyntax.self)?.calledExpression.id == node.id
        let isFunctionName = name.first?.isLowercase == true && !name.hasSuffix("_t") && name != "statx"
        if let what = linuxOnlySymbols[name], !declaredNames.contains(name), isCall || !isFunctionName,
            onApple(Syntax(node))
        {
            report(node, Rule.linuxOnly, "\(name): \(what), where an Apple build sees it; put it under #if os(Linux)")
        }
        if appleOnlySymbols.contains(name) || appleOnlyPrefixes.contains(where: name.hasPrefix),
            !declaredNames.contains(name),
            onLinux(Syntax(node))
        {
            report(
                node, Rule.appleOnly,
                "\(name) is Apple-only, where a Linux build sees it; put it under #if canImport(...)")
        }
    }

    /// Whether a string is the right operand of `+` (`root + "/proc/meminfo"`): a path under
    /// another directory, such as a test's stand-in for `/`.
    private func isAppended(_ node: StringLiteralExprSyntax) -> Bool {
        guard let list = node.parent?.as(ExprListSyntax.self) else { return false }
        var previous: ExprSyntax?
        for element in list {
            if element.id == node.id { break }
            previous = element
        }
        return previous?.as(BinaryOperatorExprSyntax.self)?.operator.text == "+"
    }

    private func isIsolationCall(_ member: MemberAccessExprSyntax) -> Bool {
        guard let call = member.parent?.as(FunctionCallExprSyntax.self) else { return false }
        return call.arguments.first?.label?.text == "isolation"
    }

    /// Whether `node` is an NSImage that a cache would hold: a generic argument, or what a
    /// `typealias` (a codec's `Value` or `Image`) stands for.
    private func isHeldValue(_ node: IdentifierTypeSyntax) -> Bool {
        var current = Syntax(node)
        while let parent = current.parent {
            if parent.is(GenericArgumentSyntax.self) { return true }
            if parent.is(TypeAliasDeclSyntax.self) || parent.is(TypeInitializerClauseSyntax.self) { return true }
            if parent.is(CodeBlockSyntax.self) || parent.is(MemberBlockSyntax.self) { return false }
            current = parent
        }
        return false
    }

    private func enclosingFunctionMentions(_ node: some SyntaxProtocol, _ name: String) -> Bool {
        var current = Syntax(node)
        while let parent = current.parent {
            if parent.is(FunctionDeclSyntax.self) || parent.is(ClosureExprSyntax.self)
                || parent.is(AccessorDeclSyntax.self)
            {
                return parent.tokens(viewMode: .sourceAccurate).contains { $0.text == name }
            }
            current = parent
        }
        return false
    }
}

/// Finds the file's `import Synchronization`s and the type names it declares.
final class PrePass: SyntaxVisitor {
    var synchronizationImports: [ImportDeclSyntax] = []
    var declaredNames = Set<String>()

    override func visit(_ node: ImportDeclSyntax) -> SyntaxVisitorContinueKind {
        if node.path.first?.name.text == "Synchronization" { synchronizationImports.append(node) }
        return .skipChildren
    }
    override func visit(_ node: TypeAliasDeclSyntax) -> SyntaxVisitorContinueKind {
        declaredNames.insert(node.name.text)
        return .visitChildren
    }
    override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
        declaredNames.insert(node.name.text)
        return .visitChildren
    }
    override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
        declaredNames.insert(node.name.text)
        return .visitChildren
    }
    override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
        declaredNames.insert(node.name.text)
        return .visitChildren
    }
    override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind {
        declaredNames.insert(node.name.text)
        return .visitChildren
    }
}
