// A child process for the memory test: it downloads one URL through a ResourceLoader into a
// cache directory and reports its resident memory, measured apart from the test process (whose
// parallel tests would blur the numbers).
//
//   StashHTTPTestWorker download URL DIR
//
// prints one line:
//
//   RESULT baselineKB=… peakKB=… hwmBeforeKB=… hwmAfterKB=… samples=… largestBuffered=… size=… file=…
//
//   StashHTTPTestWorker fetch URL DIR
//
// loads URL as a file, writing `PROGRESS <bytes>` for each progress report (unbuffered, so that
// a test can kill it mid-download) and `DONE <size>` at the end.
//
// baselineKB is VmRSS after the loader exists and before the transfer; peakKB the largest VmRSS
// sampled on each progress report during it; hwm*KB the kernel's VmHWM (peak RSS) before and after.
import Foundation
import Stash
import StashHTTP

/// A `/proc/self/status` field in kB (Linux only; 0 elsewhere).
func status(_ field: String) -> Int {
    #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
                ?? 0
        }
    #endif
    return 0
}

let arguments = CommandLine.arguments
guard arguments.count == 4, ["download", "fetch"].contains(arguments[1]), let url = URL(string: arguments[2]) else {
    print("usage: StashHTTPTestWorker download|fetch URL DIR")
    exit(2)
}
if arguments[1] == "fetch" {
    await fetch(url, directory: arguments[3])
}
do {
    let cache = try DiskCache(directory: URL(fileURLWithPath: arguments[3]), sizeLimit: .megabytes(500))
    let loader = ResourceLoader(cache: cache, configuration: .init(retryPolicy: .none))
    let baseline = status("VmRSS")
    let hwmBefore = status("VmHWM")
    let task = loader.task(for: ResourceRequest(url), delivery: .file)
    var peak = baseline
    var samples = 0
    for await _ in task.progress {
        peak = max(peak, status("VmRSS"))
        samples += 1
    }
    let response = try await task.response
    let hwmAfter = status("VmHWM")
    let file = response.fileURL!
    let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
    print(
        "RESULT baselineKB=\(baseline) peakKB=\(peak) hwmBeforeKB=\(hwmBefore) hwmAfterKB=\(hwmAfter)"
            + " samples=\(samples) largestBuffered=\(loader.statistics.largestBufferedBody) size=\(size) file=\(file.path)"
    )
} catch {
    print("ERROR \(error)")
    exit(1)
}

/// The `fetch` mode: exits when done.
func fetch(_ url: URL, directory: String) async -> Never {
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    do {
        let cache = try DiskCache(directory: URL(fileURLWithPath: directory), sizeLimit: .megabytes(500))
        let loader = ResourceLoader(cache: cache, configuration: .init(retryPolicy: .none))
        let task = loader.task(for: ResourceRequest(url), delivery: .file)
        for await progress in task.progress { say("PROGRESS \(progress.bytesReceived)") }
        let file = try await task.response.fileURL!
        let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? -1
        say("DONE \(size)")
        exit(0)
    } catch {
        say("ERROR \(error)")
        exit(1)
    }
}
