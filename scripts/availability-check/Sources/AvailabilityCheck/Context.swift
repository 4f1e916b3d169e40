import SwiftSyntax

/// The platforms a piece of code may be compiled for, as far as its `#if` conditions say.
struct Platforms: OptionSet, Sendable {
    let rawValue: UInt8
    static let linux = Platforms(rawValue: 1)
    /// macOS, iOS, tvOS, watchOS, visionOS (and Mac Catalyst).
    static let apple = Platforms(rawValue: 2)
    /// Windows, Android, FreeBSD, WASI, ...
    static let other = Platforms(rawValue: 4)
    static let all: Platforms = [.linux, .apple, .other]
}

/// What a compilation condition says: where it may be true, and where it certainly is.
struct Reach {
    var may: Platforms
    var must: Platforms

    /// A condition that says nothing about the platform (a trait, `DEBUG`, `compiler(>=6)`, ...).
    static let unknown = Reach(may: .all, must: [])
    static func exactly(_ platforms: Platforms) -> Reach { Reach(may: platforms, must: platforms) }
}

/// Platform names of `os(...)`.
let applePlatformNames: Set<String> = ["macOS", "OSX", "iOS", "tvOS", "watchOS", "visionOS", "xrOS"]

/// Modules that only Apple's SDKs have.
///
/// `canImport` of one is true on Apple platforms only; `everyAppleModule` holds those that every
/// Apple platform has.
let appleModules: Set<String> = [
    "Darwin", "ObjectiveC", "os", "OSLog", "UIKit", "AppKit", "CoreGraphics", "ImageIO", "AVFoundation",
    "AVKit", "SwiftUI", "UniformTypeIdentifiers", "Combine", "Network", "CryptoKit", "Security", "CoreImage",
    "QuartzCore", "Photos", "PhotosUI", "WatchKit", "MobileCoreServices", "CoreServices", "Metal", "CoreML",
]
let everyAppleModule: Set<String> = ["Darwin", "ObjectiveC", "os", "CoreGraphics", "ImageIO", "Security"]

/// Evaluates a `#if` condition against the platforms.
func reach(of condition: ExprSyntax) -> Reach {
    if let tuple = condition.as(TupleExprSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first {
        return reach(of: only.expression)
    }
    if let prefix = condition.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "!" {
        let inner = reach(of: prefix.expression)
        return Reach(may: Platforms.all.subtracting(inner.must), must: Platforms.all.subtracting(inner.may))
    }
    if let literal = condition.as(BooleanLiteralExprSyntax.self) {
        return literal.literal.tokenKind == .keyword(.true) ? .exactly(.all) : .exactly([])
    }
    if let sequence = condition.as(SequenceExprSyntax.self) {
        return reach(ofSequence: Array(sequence.elements))
    }
    if let infix = condition.as(InfixOperatorExprSyntax.self) {
        let left = reach(of: infix.leftOperand)
        let right = reach(of: infix.rightOperand)
        switch infix.operator.as(BinaryOperatorExprSyntax.self)?.operator.text {
        case "&&": return Reach(may: left.may.intersection(right.may), must: left.must.intersection(right.must))
        case "||": return Reach(may: left.may.union(right.may), must: left.must.union(right.must))
        default: return .unknown
        }
    }
    if let call = condition.as(FunctionCallExprSyntax.self),
        let name = call.calledExpression.as(DeclReferenceExprSyntax.self)?.baseName.text,
        let argument = call.arguments.first?.expression.trimmedDescription
    {
        switch name {
        case "os":
            if argument == "Linux" { return .exactly(.linux) }
            if applePlatformNames.contains(argument) { return Reach(may: .apple, must: []) }
            return Reach(may: .other, must: [])
        case "canImport":
            switch argument {
            case "Glibc": return Reach(may: [.linux, .other], must: .linux)
            case "Musl": return Reach(may: [.linux, .other], must: [])
            case "WinSDK", "ucrt", "Android", "Bionic", "WASILibc": return Reach(may: .other, must: [])
            default:
                if appleModules.contains(argument) {
                    return Reach(may: .apple, must: everyAppleModule.contains(argument) ? .apple : [])
                }
                return .unknown
            }
        case "targetEnvironment":
            return argument == "macCatalyst" ? Reach(may: .apple, must: []) : .unknown
        default: return .unknown
        }
    }
    return .unknown
}

/// `a && b || c` as the parser leaves it (unfolded): `&&` binds tighter than `||`.
private func reach(ofSequence elements: [ExprSyntax]) -> Reach {
    var alternatives: [[ExprSyntax]] = [[]]
    for element in elements {
        if let op = element.as(BinaryOperatorExprSyntax.self) {
            if op.operator.text == "||" { alternatives.append([]) }
            continue
        }
        alternatives[alternatives.count - 1].append(element)
    }
    var result = Reach(may: [], must: [])
    for terms in alternatives {
        var term = Reach.exactly(.all)
        for expression in terms {
            let part = reach(of: expression)
            term = Reach(may: term.may.intersection(part.may), must: term.must.intersection(part.must))
        }
        result = Reach(may: result.may.union(term.may), must: result.must.union(term.must))
    }
    return result
}

/// The platforms `node` is compiled for: the intersection of the branches of every `#if` around it.
func platforms(of node: some SyntaxProtocol) -> Platforms {
    var result = Platforms.all
    var current = Syntax(node)
    while let parent = current.parent {
        if let clause = current.as(IfConfigClauseSyntax.self), let list = parent.as(IfConfigClauseListSyntax.self) {
            var active = Platforms.all
            for earlier in list {
                if earlier.id == clause.id { break }
                if let condition = earlier.condition { active.subtract(reach(of: condition).must) }
            }
            if let condition = clause.condition { active.formIntersection(reach(of: condition).may) }
            result.formIntersection(active)
        }
        current = parent
    }
    return result
}

/// The Apple releases that brought Swift 6's runtime and standard library additions
/// (Synchronization, `AsyncSequence.Failure`, typed throws in function types): code that uses
/// them needs `@available` or `#available` naming each.
let swift6Releases: [String: Int] = ["macOS": 15, "iOS": 18, "tvOS": 18, "watchOS": 11, "visionOS": 2]

/// Whether an `@available` or `#available` argument list limits the code to `swift6Releases`
/// or later on every Apple platform (or makes it unavailable there).
func coversSwift6Releases(_ arguments: AvailabilityArgumentListSyntax) -> Bool {
    var covered = Set<String>()
    var platform: String?
    for argument in arguments {
        switch argument.argument {
        case .availabilityVersionRestriction(let restriction):
            let name = restriction.platform.text
            if let required = swift6Releases[name], let version = restriction.version,
                let major = Int(version.major.text), major >= required
            {
                covered.insert(name)
            }
        case .token(let token):
            if swift6Releases[token.text] != nil {
                platform = token.text
            } else if token.text == "unavailable", let platform {
                covered.insert(platform)
            }
        case .availabilityLabeledArgument(let labeled):
            if labeled.label.text == "introduced", let platform, let required = swift6Releases[platform],
                case .version(let version) = labeled.value, let major = Int(version.major.text), major >= required
            {
                covered.insert(platform)
            }
        }
    }
    return covered.isSuperset(of: swift6Releases.keys)
}

/// Whether `node` sits in code that runs only on the Swift 6 releases: a declaration marked
/// `@available` for them, the body of an `if #available` for them, or what follows a
/// `guard #available` for them in the same block.
func isInSwift6Scope(_ node: some SyntaxProtocol) -> Bool {
    var current = Syntax(node)
    while let parent = current.parent {
        if let declaration = current.asProtocol(WithAttributesSyntax.self),
            declaration.attributes.contains(where: { element in
                guard case .attribute(let attribute) = element,
                    attribute.attributeName.trimmedDescription == "available",
                    case .availability(let arguments) = attribute.arguments
                else { return false }
                return coversSwift6Releases(arguments)
            })
        {
            return true
        }
        if let ifExpression = parent.as(IfExprSyntax.self), current.id == ifExpression.body.id,
            ifExpression.conditions.contains(where: coversSwift6Releases)
        {
            return true
        }
        if let item = current.as(CodeBlockItemSyntax.self), let list = parent.as(CodeBlockItemListSyntax.self) {
            for earlier in list {
                if earlier.id == item.id { break }
                if let guardStatement = earlier.item.as(GuardStmtSyntax.self),
                    guardStatement.conditions.contains(where: coversSwift6Releases)
                {
                    return true
                }
            }
        }
        current = parent
    }
    return false
}

private func coversSwift6Releases(_ condition: ConditionElementSyntax) -> Bool {
    guard case .availability(let availability) = condition.condition,
        availability.availabilityKeyword.tokenKind == .poundAvailable
    else { return false }
    return coversSwift6Releases(availability.availabilityArguments)
}
