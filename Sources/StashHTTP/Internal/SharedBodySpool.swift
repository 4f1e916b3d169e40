import Foundation
import Stash

/// Where the loader receives a body streamed from the shared tier: in memory when the head
/// announces less than the disk tier's inline threshold, otherwise in a download file that the
/// disk cache then takes by rename, so a large shared hit never sits in memory whole.
///
/// Nothing here is usable until the tier has verified the body (its `streamEntry` returned the
/// head); ``discard()`` removes what a miss or failure left.
// @unchecked: the tier calls begin, then append, one call at a time (SharedBodySink's contract);
// `finish`/`discard` run after it returned.
final class SharedBodySpool: SharedBodySink, @unchecked Sendable {
    /// What the spool holds once the body is complete.
    enum Body {
        case memory(Data)
        case file(DownloadFile)
    }

    private let fileThreshold: Int
    private let directory: String
    private let accepts: @Sendable (SharedEntryHead) -> Bool
    private var data = Data()
    private var file: DownloadFile?

    /// - Parameters:
    ///   - fileThreshold: Bodies of at least this many bytes go to a file.
    ///   - directory: Where the file is created (the loader's downloads directory, on the disk
    ///     cache's file system, so that storing it is a rename).
    ///   - accepts: Whether to receive the body of an entry, given its head (freshness).
    init(fileThreshold: Int, directory: String, accepts: @escaping @Sendable (SharedEntryHead) -> Bool) {
        self.fileThreshold = fileThreshold
        self.directory = directory
        self.accepts = accepts
    }

    deinit { file?.remove() }

    func begin(_ head: SharedEntryHead) async throws -> Bool {
        guard accepts(head) else { return false }
        if head.size >= fileThreshold {
            do {
                file = try DownloadFile.create(in: directory)
            } catch {
                throw StashError(.io, "Cannot create a file in \(directory) for '\(head.key)'.", cause: error)
            }
        } else {
            data.reserveCapacity(head.size)
        }
        return true
    }

    func append(_ chunk: Data) async throws {
        guard let file else {
            data.append(chunk)
            return
        }
        do {
            try file.write(chunk)
        } catch {
            throw StashError(.io, "Cannot write a shared-tier body to \(file.path).", cause: error)
        }
    }

    /// The complete body, handed over (the spool no longer removes its file).
    func finish() -> Body {
        guard let file else { return .memory(data) }
        self.file = nil
        file.close()
        return .file(file)
    }

    /// Removes what was received.
    func discard() {
        file?.remove()
        file = nil
        data = Data()
    }
}
