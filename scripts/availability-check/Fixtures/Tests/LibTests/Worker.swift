import Foundation

let worker = URL(fileURLWithPath: CommandLine.arguments[0])  // flagged
#if os(Linux)
    let linuxWorker = URL(fileURLWithPath: CommandLine.arguments[0])
#endif
