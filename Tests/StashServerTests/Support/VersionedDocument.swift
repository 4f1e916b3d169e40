#if Serve
    import Foundation

    /// A document on a test origin whose `GET` answers its current version as the body ("v1",
    /// "v2", ...), for tests of invalidation: a `POST` answers an empty `200`, and a `GET` that
    /// arrives while a held version is current waits until that version's gate opens (it still
    /// answers the version it arrived under).
    final class VersionedDocument: Sendable {
        private let version = Locked(1)
        private let gates: [Int: Gate]
        private let arrivals = Locked([Int: Int]())

        /// Routes `path` on `origin`; `headers` gives each version's response fields.
        init(
            origin: Origin, path: String, holding held: [Int],
            headers: @escaping @Sendable (Int) -> [(String, String)] = { _ in [("Cache-Control", "max-age=600")] }
        ) {
            let gates = Dictionary(uniqueKeysWithValues: held.map { ($0, Gate()) })
            self.gates = gates
            let (version, arrivals) = (version, arrivals)
            origin.route(path) { request, _ in
                if request.method == "POST" { return Origin.Reply(body: Data()) }
                let current = version.withLock { $0 }
                if let gate = gates[current] {
                    arrivals.withLock { $0[current, default: 0] += 1 }
                    await gate.wait()
                }
                return Origin.Reply(headers: headers(current), body: Data("v\(current)".utf8))
            }
        }

        /// Makes `version` the one a `GET` gets from now on.
        func set(_ version: Int) { self.version.withLock { $0 = version } }

        /// How many `GET`s arrived while the held `version` was current.
        func arrived(_ version: Int) -> Int { arrivals.withLock { $0[version] ?? 0 } }

        /// Lets the `GET`s held for `version` answer, and those that come later pass.
        func release(_ version: Int) { gates[version]?.open() }
    }
#endif
