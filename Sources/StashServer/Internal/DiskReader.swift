#if Serve
    import Dispatch
    import Foundation
    import NIOCore
    import Stash

    /// The proxy's disk-hit reads: run on threads of their own, off the event loops, and handed
    /// back to the loop that asked in batches, so that a disk hit does not pay a thread wake-up and
    /// an event-loop wake-up of its own.
    ///
    /// A loop ``submit(_:on:completion:)``s a read to one queue. A reader thread that is already
    /// running takes it without being woken; a sleeping reader is woken only when no reader runs
    /// (or to watch the one that runs, see below). A running reader takes reads one at a time and
    /// keeps their answers until the queue is empty (or ``batchLimit`` answers wait), then gives
    /// each loop all of its answers in one task: one wake-up of the loop per batch, not per read.
    /// Under load one reader runs without sleeping and the loops are woken once per batch of hits.
    ///
    /// A read that blocks (a page that is not resident, a held lock) holds up only itself: while
    /// a reader runs, another sleeps with a timeout, and when the running one has been on one read
    /// for ``stallLimit`` it takes the reads still queued and hands back the answers kept so far.
    /// Memory-tier hits never wait for a reader at all. Answers reach a loop in the order their
    /// reads ended; a connection has at most one read in flight, so its requests stay in order
    /// (RFC 9112 §9.3.2).
    final class DiskReader<Request: Sendable, Answer: Sendable>: Sendable {
        /// Called on the loop that submitted the read, with the read's answer, or with
        /// ``Stopped`` when the reader stopped before running it.
        typealias Completion = @Sendable (Result<Answer, any Error>) -> Void

        /// The reason a read submitted to a reader that stops is not run.
        struct Stopped: Error {}

        fileprivate struct Job {
            let request: Request
            let lane: Int
            let completion: Completion
        }

        fileprivate struct Finished {
            let completion: Completion
            let answer: Result<Answer, any Error>
        }

        /// What ``submit(_:on:completion:)`` does after queueing a read.
        private enum Wake {
            case none
            case reader(Int)
            case stopped
        }

        fileprivate enum Action {
            case perform(Job)
            case handBack([(lane: Int, batch: [Finished])])
            case sleep(until: UInt64?)
            case exit
        }

        fileprivate struct State {
            var queue = CircularBuffer<Job>()
            /// Answers not handed back yet, by lane.
            var finished: [[Finished]]
            var finishedCount = 0
            /// Readers between taking their first read and going back to sleep.
            var running = 0
            /// Readers signalled and not yet back in ``next(reader:isRunning:)``.
            var waking = 0
            /// Sleeping readers, the most recent last.
            var idle: [Int] = []
            var isSignalled: [Bool]
            /// Which sleeping readers sleep with a timeout, to take over from a stalled one.
            var isWatching: [Bool]
            var watchers = 0
            /// When the latest read started (`DispatchTime` nanoseconds).
            var lastStart: UInt64 = 0
            var isStopping = false
            var isStarted = false
            var exited = 0
            var stopWaiter: CheckedContinuation<Void, Never>?
        }

        /// The loops that may submit reads; their answers come back to them.
        private let lanes: [any EventLoop]
        private let perform: @Sendable (Request) -> Answer
        private let state: LockedValue<State>
        private let wakes: [DispatchSemaphore]
        /// How long one read may run before a sleeping reader takes the reads queued behind it,
        /// in nanoseconds: far longer than a read of resident pages (tens of microseconds), short
        /// against a request's latency.
        let stallLimit: UInt64
        /// The most answers a reader keeps before it hands them back.
        let batchLimit: Int

        /// Creates a reader with `threads` threads (started by ``start()``) for reads submitted
        /// on `loops`, each run with `perform`.
        init(
            threads: Int, loops: [any EventLoop], stallLimit: TimeAmount = .milliseconds(2), batchLimit: Int = 32,
            perform: @escaping @Sendable (Request) -> Answer
        ) {
            precondition(threads >= 1, "A disk reader needs at least one thread.")
            self.lanes = loops
            self.perform = perform
            self.stallLimit = UInt64(max(0, stallLimit.nanoseconds))
            self.batchLimit = max(1, batchLimit)
            self.wakes = (0..<threads).map { _ in DispatchSemaphore(value: 0) }
            self.state = LockedValue(
                State(
                    finished: Array(repeating: [], count: loops.count),
                    isSignalled: Array(repeating: false, count: threads),
                    isWatching: Array(repeating: false, count: threads)))
        }

        /// Starts the threads.
        func start() {
            let isNew = state.withLock { state in
                defer { state.isStarted = true }
                return !state.isStarted && !state.isStopping
            }
            guard isNew else { return }
            for reader in wakes.indices {
                Thread { [self] in run(reader: reader) }.start()
            }
        }

        /// Runs `request` on a reader thread and calls `completion` with its answer on `loop`,
        /// never before returning; `false`, having done nothing, when `loop` is not one of the
        /// reader's loops.
        ///
        /// - Complexity: O(1): a lock, and a thread wake-up only when no reader is running.
        func submit(_ request: Request, on loop: any EventLoop, completion: @escaping Completion) -> Bool {
            guard let lane = lanes.firstIndex(where: { $0 === loop }) else { return false }
            let stallLimit = stallLimit
            let wake = state.withLock { state -> Wake in
                guard !state.isStopping else { return .stopped }
                state.queue.append(Job(request: request, lane: lane, completion: completion))
                guard !state.idle.isEmpty else { return .none }
                if state.running > 0 {
                    // A reader runs and will take the read, unless it has stalled: then a sleeping
                    // one takes it, and one sleeps with a timeout to take over if it stalls later.
                    let isStalled = DispatchTime.now().uptimeNanoseconds &- state.lastStart >= stallLimit
                    guard isStalled || (state.watchers == 0 && state.waking == 0) else { return .none }
                } else if state.waking > 0 {
                    return .none
                }
                return .reader(state.signalOne())
            }
            switch wake {
            case .none: break
            case .reader(let reader): wakes[reader].signal()
            case .stopped: loop.execute { completion(.failure(Stopped())) }
            }
            return true
        }

        /// Stops the threads once every read submitted has been run and answered; reads
        /// submitted from now on are answered ``Stopped``.
        func shutdown() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (toWake, unrun, isDone) = state.withLock { state -> ([Int], [Job], Bool) in
                    state.isStopping = true
                    guard state.isStarted else {
                        defer { state.queue.removeAll() }
                        return ([], Array(state.queue), true)
                    }
                    var sleeping: [Int] = []
                    while !state.idle.isEmpty { sleeping.append(state.signalOne()) }
                    if state.exited == wakes.count { return (sleeping, [], true) }
                    state.stopWaiter = continuation
                    return (sleeping, [], false)
                }
                for reader in toWake { wakes[reader].signal() }
                for job in unrun {
                    lanes[job.lane].execute { job.completion(.failure(Stopped())) }
                }
                if isDone { continuation.resume() }
            }
        }

        /// A reader thread's loop: take reads, hand answers back, sleep; until stopped.
        private func run(reader: Int) {
            // Named from the thread itself: on Linux a name set before the start is not applied.
            Thread.current.name = "stash-disk-rd-\(reader)"
            var isRunning = false
            while true {
                let now = DispatchTime.now().uptimeNanoseconds
                switch state.withLock({ $0.next(reader: reader, isRunning: &isRunning, now: now, limits: self) }) {
                case .perform(let job):
                    let answer = perform(job.request)
                    state.withLock { state in
                        state.finished[job.lane].append(Finished(completion: job.completion, answer: .success(answer)))
                        state.finishedCount += 1
                    }
                case .handBack(let batches):
                    for (lane, batch) in batches {
                        lanes[lane].execute {
                            for finished in batch { finished.completion(finished.answer) }
                        }
                    }
                case .sleep(let deadline):
                    guard let deadline else {
                        wakes[reader].wait()
                        continue
                    }
                    guard wakes[reader].wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .timedOut
                    else { continue }
                    let isSignalled = state.withLock { state -> Bool in
                        guard let index = state.idle.firstIndex(of: reader) else { return true }
                        state.idle.remove(at: index)
                        state.stopsWatching(reader)
                        return false
                    }
                    // A wake-up raced the timeout: take it, so that the next sleep is not cut short.
                    if isSignalled { wakes[reader].wait() }
                case .exit:
                    let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                        state.exited += 1
                        guard state.exited == wakes.count else { return nil }
                        defer { state.stopWaiter = nil }
                        return state.stopWaiter
                    }
                    waiter?.resume()
                    return
                }
            }
        }
    }

    extension DiskReader.State {
        /// What `reader` does next, decided under the lock: hand back the answers it kept when
        /// the queue is empty or enough wait, else take the next read when it may (it runs
        /// already, none runs, or the one running has stalled), else sleep; timed while another
        /// reader runs, to take over if that one stalls.
        fileprivate mutating func next(
            reader: Int, isRunning: inout Bool, now: UInt64, limits: DiskReader
        ) -> DiskReader.Action {
            if isSignalled[reader] {
                isSignalled[reader] = false
                waking -= 1
            }
            if finishedCount >= limits.batchLimit || (queue.isEmpty && finishedCount > 0) {
                var batches: [(lane: Int, batch: [DiskReader.Finished])] = []
                for lane in finished.indices where !finished[lane].isEmpty {
                    batches.append((lane, finished[lane]))
                    finished[lane] = []
                }
                finishedCount = 0
                return .handBack(batches)
            }
            if !queue.isEmpty, isRunning || running == 0 || now &- lastStart >= limits.stallLimit {
                if !isRunning {
                    isRunning = true
                    running += 1
                }
                lastStart = now
                return .perform(queue.removeFirst())
            }
            if isRunning {
                isRunning = false
                running -= 1
            }
            if isStopping, queue.isEmpty { return .exit }
            idle.append(reader)
            guard running > 0 else { return .sleep(until: nil) }
            // Another reader runs: sleep with a timeout, to take the queue over if it stalls on a
            // read (after the stall limit counted from that read's start, or from now when the
            // read has been running longer already).
            isWatching[reader] = true
            watchers += 1
            let stalledAt = lastStart &+ limits.stallLimit
            return .sleep(until: stalledAt > now ? stalledAt : now &+ limits.stallLimit)
        }

        /// Takes the most recent sleeper off ``idle`` to be woken; returns it.
        fileprivate mutating func signalOne() -> Int {
            let reader = idle.removeLast()
            stopsWatching(reader)
            isSignalled[reader] = true
            waking += 1
            return reader
        }

        fileprivate mutating func stopsWatching(_ reader: Int) {
            guard isWatching[reader] else { return }
            isWatching[reader] = false
            watchers -= 1
        }
    }
#endif
