#if Tool
    import Stash

    /// The tool's lock: the core's `LockedValue` (a `Synchronization.Mutex` on Linux), under the
    /// name the tool's files already use, so that the package has one lock type.
    typealias Locked<Value> = LockedValue<Value>
#endif
