import Stash

/// A memory tier of decoded values that the loader must tell when one of its transfers replaces
/// or removes an entry's bytes.
protocol DecodedValueTier: AnyObject, Sendable {
    /// Drops the decoded value for `key` from memory; see `Cache.removeFromMemory(forKey:)`.
    func removeFromMemory(forKey key: String)
}

extension Cache: DecodedValueTier {}

/// The memory tiers of decoded values in front of one loader: the ones it keeps per codec type
/// for ``ResourceLoader/value(for:codec:)``, and those of every ``ValueLoader`` made from it.
///
/// Each tier is held weakly, so a `ValueLoader` that the caller drops is freed with its values;
/// the loader's own tiers are held strongly in `defaults`. Nothing is called under the lock.
final class ValueTiers: Sendable {
    private struct WeakTier {
        weak var tier: (any DecodedValueTier)?
    }

    private struct State {
        var tiers: [ObjectIdentifier: WeakTier] = [:]
        /// The tiers of ``ResourceLoader/value(for:codec:)``, by codec type.
        var defaults: [ObjectIdentifier: any Sendable] = [:]
    }

    private let state = LockedValue(State())

    /// Starts telling `tier` about replaced entries.
    func register(_ tier: any DecodedValueTier) {
        state.withLock { state in
            state.tiers = state.tiers.filter { $0.value.tier != nil }
            state.tiers[ObjectIdentifier(tier)] = WeakTier(tier: tier)
        }
    }

    /// The loader's own tier for the codec type `codecType`, made with `make` (then registered)
    /// on first use.
    func defaultTier<Value: Sendable>(for codecType: Any.Type, make: () -> ValueTier<Value>) -> ValueTier<Value> {
        let id = ObjectIdentifier(codecType)
        if let tier = state.withLock({ $0.defaults[id] as? ValueTier<Value> }) { return tier }
        let made = make()
        let (tier, isNew) = state.withLock { state -> (ValueTier<Value>, Bool) in
            // Another task may have made one meanwhile: the first one kept wins.
            if let tier = state.defaults[id] as? ValueTier<Value> { return (tier, false) }
            state.defaults[id] = made
            return (made, true)
        }
        if isNew { register(tier.cache) }
        return tier
    }

    /// Drops `key` from every live tier.
    func removeFromMemory(forKey key: String) {
        let live = state.withLock { state in state.tiers.values.compactMap(\.tier) }
        for tier in live { tier.removeFromMemory(forKey: key) }
    }
}

/// One memory tier of decoded values and the codec that fills it.
struct ValueTier<Value: Sendable>: Sendable {
    let cache: Cache<Value>
    let codec: any ValueCodec<Value>
}
