#if Tool
    import ArgumentParser
    import Foundation

    /// The `stash` executable's entry point: parses the command line, runs the command, and turns
    /// every failure into one line on standard error and a documented exit status.
    @main
    enum StashMain {
        static func main() async {
            let arguments = Array(CommandLine.arguments.dropFirst())
            let status = await run(arguments)
            exit(status)
        }

        /// Runs `stash` with `arguments` and returns its exit status.
        static func run(_ arguments: [String]) async -> Int32 {
            let command: any ParsableCommand
            do {
                command = try StashCommand.parseAsRoot(arguments)
            } catch {
                if StashCommand.exitCode(for: error) == .success {
                    // `--help`, `help` and `--version`: ArgumentParser prints them and exits 0.
                    StashCommand.exit(withError: error)
                }
                var message = StashCommand.message(for: error).oneLine
                if let last = message.last, !".!?".contains(last) { message += "." }
                Terminal.printError("\(message) Run '\(helpCommand(for: arguments))' for usage.")
                return CLIError.usageStatus
            }
            do {
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    var syncCommand = command
                    try syncCommand.run()
                }
                return 0
            } catch let error as CLIError {
                if !error.message.isEmpty { Terminal.printError(error.message) }
                return error.status
            } catch let error as ExitCode {
                return error.rawValue
            } catch let error as ValidationError {
                // An option that a command checks only when it runs (`serve --memory-limit 0B`): a
                // usage error, as when ArgumentParser finds it.
                var message = error.message
                if let last = message.last, !".!?".contains(last) { message += "." }
                Terminal.printError("\(message) Run '\(helpCommand(for: arguments))' for usage.")
                return CLIError.usageStatus
            } catch {
                if StashCommand.exitCode(for: error) == .success {
                    // `--help` parses to a help command that "fails" with the help text.
                    StashCommand.exit(withError: error)
                }
                let cliError = CLIError(error, while: "running stash")
                Terminal.printError(cliError.message)
                return cliError.status
            }
        }

        /// `stash SUBCOMMAND --help` when the arguments name a subcommand, else `stash --help`.
        private static func helpCommand(for arguments: [String]) -> String {
            let names = StashCommand.configuration.subcommands.compactMap { $0.configuration.commandName }
            if let name = arguments.first(where: { names.contains($0) }) { return "stash \(name) --help" }
            return "stash --help"
        }
    }
#else
    import Foundation

    /// The `stash` executable when the package was built without its `Tool` trait: it says how to build the
    /// whole tool. (An app that depends on Stash never builds the tool's dependencies.)
    @main
    enum StashMain {
        static func main() {
            let message =
                "stash was built without the Tool trait: build it with `swift build --traits Tool`"
                + " (or `--enable-all-traits`), or run `make demo`.\n"
            FileHandle.standardError.write(Data(message.utf8))
            exit(2)
        }
    }
#endif
