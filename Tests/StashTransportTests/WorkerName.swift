extension Worker {
    /// The worker executable this test target runs.
    static let executableName = "StashHTTPTestWorker"
}
