extension Worker {
    /// The worker executable this test target would run (it runs none; Support needs the name).
    static let executableName = "StashHTTPTestWorker"
}
