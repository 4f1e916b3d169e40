#if Tool
    import Foundation
    import StashHTTP

    /// A one-line progress bar on standard error, drawn only on a terminal and only for long
    /// transfers (a large announced body, or one that takes more than a moment), so that hits and
    /// quick downloads print nothing.
    final class ProgressBar {
        private let label: String
        private let start = ContinuousClock.now
        private let delay: Duration
        private let largeSize: Int
        private let isEnabled: Bool
        private var isFirstUpdate = true
        private var isDrawn = false
        private var lastDrawn: ContinuousClock.Instant?

        /// Creates a bar for the transfer described by `label`.
        ///
        /// - Parameters:
        ///   - label: What is transferred, such as the URL; shortened to fit.
        ///   - delay: How long a transfer runs before the bar appears.
        ///   - largeSize: An announced body at least this large shows the bar at once. Defaults to 1 MB.
        ///   - isEnabled: Whether to draw at all; defaults to whether standard error is a terminal.
        init(
            label: String, delay: Duration = .milliseconds(250), largeSize: Int = 1_000_000,
            isEnabled: Bool = Terminal.isStandardErrorATerminal
        ) {
            self.label = label
            self.delay = delay
            self.largeSize = largeSize
            self.isEnabled = isEnabled
        }

        /// Redraws the bar for `progress`.
        func update(_ progress: TransferProgress) {
            let now = ContinuousClock.now
            let isComplete = progress.bytesExpected == progress.bytesReceived
            defer { isFirstUpdate = false }
            // A cache hit reports its whole size at once: nothing to show.
            guard isEnabled, !(isFirstUpdate && isComplete) else { return }
            guard (progress.bytesExpected ?? 0) >= largeSize || now - start >= delay else { return }
            // At most ten redraws a second, and always the last one.
            if let lastDrawn, now - lastDrawn < .milliseconds(100), !isComplete { return }
            lastDrawn = now
            Terminal.printToStandardError("\r\u{1B}[K" + Self.line(label: label, progress: progress, width: 80))
            isDrawn = true
        }

        /// Erases the bar, if it was drawn.
        func finish() {
            if isDrawn { Terminal.printToStandardError("\r\u{1B}[K") }
            isDrawn = false
        }

        /// The bar's text: `label [#######.......]  45 %  1.2 MB of 2.6 MB`, at most `width` characters.
        static func line(label: String, progress: TransferProgress, width: Int) -> String {
            let received = Output.size(progress.bytesReceived)
            let status: String
            if let fraction = progress.fractionCompleted, let expected = progress.bytesExpected {
                let cells = 20
                let filled = max(0, min(cells, Int(fraction * Double(cells))))
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: cells - filled)
                status =
                    "[\(bar)] \(String(format: "%3.0f", fraction * 100)) %  \(received) of \(Output.size(expected))"
            } else {
                status = "\(received) received"
            }
            let room = max(10, width - status.count - 2)
            let shortLabel = label.count <= room ? label : "…" + label.suffix(room - 1)
            return shortLabel + "  " + status
        }
    }
#endif
