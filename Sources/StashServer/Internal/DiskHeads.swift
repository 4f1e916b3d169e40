#if Serve
    import NIOCore
    import Stash

    /// Heads decoded from disk-tier entries, by key, each with the stored text it was decoded from:
    /// a disk hit whose read returns the same text and size reuses the head instead of decoding
    /// the entry's metadata again (parsing its fields, freshness and encoded head).
    ///
    /// A head is reused only for exactly the `extra` text and the size that the same read of the
    /// index returned with the body (``DiskCache/Entry/storedExtra``): the head is a function of
    /// them alone, so a reused head is the one decoding would give. Any new version of an entry
    /// (another response, the fields of a `304`) has other text, since every stored response
    /// carries its own request and response times: an old head is never paired with a new body.
    ///
    /// Bounded by ``costLimit``: each head is charged what it takes, ``CachedResponse/undecodedHeadCost``
    /// (a head read from a ``StoredHead`` record holds its encoded head and little else), plus its
    /// text, its key and its slot; the oldest heads go first.
    final class DiskHeads: Sendable {
        private struct Head {
            let text: String
            let size: Int
            let response: CachedResponse
            let cost: Int
        }

        private struct State {
            var heads: [String: Head] = [:]
            /// Keys in the order their first head came in; each key of ``heads`` once.
            var order = CircularBuffer<String>()
            var cost = 0
        }

        private let state = LockedValue(State())
        /// The most the heads may cost together, in bytes.
        let costLimit: Int

        init(costLimit: Int) {
            self.costLimit = costLimit
        }

        /// The head kept for `key` when it was decoded from exactly `text` for a body of `size`
        /// bytes; `nil` otherwise.
        func head(forKey key: String, text: String, size: Int) -> CachedResponse? {
            state.withLock { state in
                guard let head = state.heads[key], head.size == size, head.text == text else { return nil }
                return head.response
            }
        }

        /// Keeps `response` (a head without a body) as decoded from `text` for `key`, in place of
        /// the key's previous head; drops the oldest heads while over ``costLimit``.
        func keep(_ response: CachedResponse, forKey key: String, text: String, size: Int) {
            let cost = response.undecodedHeadCost + text.utf8.count + key.utf8.count + Self.perHeadCost
            guard cost <= costLimit / 8 else { return }
            var dropped: [Head] = []
            state.withLock { state in
                if let previous = state.heads.updateValue(
                    Head(text: text, size: size, response: response, cost: cost), forKey: key)
                {
                    state.cost -= previous.cost
                    dropped.append(previous)
                } else {
                    state.order.append(key)
                }
                state.cost += cost
                while state.cost > costLimit, let oldest = state.order.popFirst() {
                    guard let head = state.heads.removeValue(forKey: oldest) else { continue }
                    state.cost -= head.cost
                    dropped.append(head)
                }
            }
            _ = dropped  // released here, outside the lock
        }

        /// The number of heads kept.
        var count: Int { state.withLock { $0.heads.count } }

        /// A head's overhead beyond its response and text: its slot in the dictionary and the
        /// order, the key's and the text's allocations.
        static let perHeadCost = 128
    }
#endif
