#if Serve
    import Foundation
    import NIOCore
    import NIOHTTP1
    import Stash

    /// An operator's purge: `PURGE /path` removes every stored response of one URL (all its `Vary`
    /// variants), `PURGE /path*` every URL whose target starts with `/path`, from the memory, disk and
    /// shared tiers, so that one purge reaches every instance that shares the tier.
    ///
    /// Accepted on the admin listener (the metrics address) from anyone who reaches it, and on the
    /// proxy's own address only from ``ServeOptions/purgeAllowList``.
    enum Purge {
        /// What a purge target asks for.
        enum Scope: Equatable {
            /// One URL, by its origin-form target.
            case url(String)
            /// Every URL whose target starts with this.
            case prefix(String)
        }

        /// `/path` or `/path*` (a target already reduced to origin form by ``RequestTarget``).
        static func scope(of target: String) -> Scope {
            target.hasSuffix("*") ? .prefix(String(target.dropLast())) : .url(target)
        }

        /// Runs a purge; returns the number of stored entries removed.
        static func run(_ scope: Scope, store: ResponseStore) async -> Int {
            switch scope {
            case .url(let target):
                let base = store.baseKey(target: target)
                let partial = await store.partial(base: base) != nil
                if partial { await store.removePartial(base: base) }
                return await store.purge(base: base) + (partial ? 1 : 0)
            case .prefix(let target): return await store.purge(basePrefix: store.baseKey(target: target))
            }
        }

        /// The status and text that answer a purge of `scope` that removed `count` entries: `200`, or
        /// `404` when nothing was stored.
        static func answer(_ scope: Scope, count: Int) -> (HTTPResponseStatus, String) {
            let what: String
            switch scope {
            case .url(let target): what = target
            case .prefix(let target): what = "every URL under \(target)"
            }
            if count == 0 { return (.notFound, "stash serve: nothing was stored for \(what)\n") }
            return (.ok, "stash serve: purged \(count) stored entr\(count == 1 ? "y" : "ies") for \(what)\n")
        }
    }

    extension ResponseStore {
        /// Removes every stored response of one URL from every tier: the base entry, every variant
        /// and the `Vary` marker.
        func purge(base: String) async -> Int {
            var removed = memory.containsValue(forKey: base) ? 1 : 0
            let markerKey = "serve-vary \(base)"
            var hasVariants = hasKnownMarker(base: base)
            if hasVariants { removed = 1 }
            if let disk {
                if ((try? await disk.attributes(forKey: base)) ?? nil) != nil { removed = 1 }
                if ((try? await disk.attributes(forKey: markerKey)) ?? nil) != nil { hasVariants = true }
            }
            if let shared {
                if removed == 0, (try? await shared.containsEntry(forKey: base)) == true { removed = 1 }
                if !hasVariants { hasVariants = (try? await shared.containsEntry(forKey: markerKey)) == true }
            }
            if hasVariants {
                // Variant keys are the base key, a line break, and the variant's generation and values.
                removed += await removeFromDisk(keysStartingWith: base + "\n")
                removed += await removeFromShared(keysStartingWith: base + "\n")
                // The memory tier's variants become unreachable with the marker (a new generation).
            }
            await invalidate(base: base)
            return removed
        }

        /// Removes every stored response whose base key starts with `basePrefix` from every tier.
        ///
        /// The memory tier cannot list its keys, so it is emptied whole (it refills from the disk
        /// tier); the disk tier is scanned; the shared tier removes the prefix in one statement.
        func purge(basePrefix: String) async -> Int {
            var removed = 0
            await fills.invalidate(keysStartingWith: basePrefix) {
                memory.removeAll()
                removed = await removeFromDisk(keysStartingWith: basePrefix)
                _ = await removeFromDisk(keysStartingWith: "serve-vary " + basePrefix)
                removed = max(removed, await removeFromShared(keysStartingWith: basePrefix))
                _ = await removeFromShared(keysStartingWith: "serve-vary " + basePrefix)
                forgetMarkers()
            }
            return removed
        }

        private func removeFromDisk(keysStartingWith prefix: String) async -> Int {
            guard let disk else { return 0 }
            var keys: [String] = []
            do {
                for try await attributes in disk.entries() where attributes.key.hasPrefix(prefix) {
                    keys.append(attributes.key)
                }
            } catch {
                logger.warning("could not list the disk tier to purge '\(prefix)': \(error)")
            }
            var removed = 0
            for key in keys {
                do {
                    try await disk.removeData(forKey: key)
                    removed += 1
                } catch {
                    logger.warning("could not purge '\(key)' from the disk tier: \(error)")
                }
            }
            return removed
        }

        private func removeFromShared(keysStartingWith prefix: String) async -> Int {
            guard let shared else { return 0 }
            do {
                return try await shared.removeEntries(withKeyPrefix: prefix)
            } catch {
                logger.warning("could not purge '\(prefix)' from the shared tier: \(error)")
                return 0
            }
        }
    }
#endif
