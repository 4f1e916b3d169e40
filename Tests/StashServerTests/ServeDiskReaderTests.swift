#if Serve
    import Foundation
    import NIOCore
    import NIOPosix
    @testable import StashServer
    import Testing

    /// The threads that run `stash serve`'s direct disk-hit reads and hand the answers back to the
    /// event loops in batches (issue 42): no read is lost or answered twice, answers reach the loop
    /// that asked, in order, and a read that is held up holds up neither the reads queued behind it
    /// nor the loop.
    @Suite(.serialized)
    struct ServeDiskReaderTests {
        /// One answer as the loop saw it.
        struct Answer: Sendable, Equatable {
            var request: Int
            var value: Int
            var isOnItsLoop: Bool
        }

        /// Submits `requests` on `loop` (from the loop itself, as a connection does), recording each
        /// answer there.
        static func submit(
            _ requests: Range<Int>, to reader: DiskReader<Int, Int>, on loop: any EventLoop,
            into answers: Locked<[Answer]>
        ) async throws {
            try await loop.submit {
                for request in requests {
                    let isSubmitted = reader.submit(request, on: loop) { result in
                        let value = (try? result.get()) ?? -1
                        answers.withLock {
                            $0.append(Answer(request: request, value: value, isOnItsLoop: loop.inEventLoop))
                        }
                    }
                    precondition(isSubmitted)
                }
            }.get()
        }

        /// Thousands of reads submitted from two loops at once, on two reader threads: each is run
        /// once and answered once, with its own answer, on the loop that submitted it.
        @Test func everyReadIsAnsweredOnceOnTheLoopThatAskedForIt() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let loops = Array(group.makeIterator())
            let runs = Locked([Int: Int]())
            let reader = DiskReader<Int, Int>(threads: 2, loops: loops) { request in
                runs.withLock { $0[request, default: 0] += 1 }
                return request * 3
            }
            reader.start()
            let answers = [Locked([Answer]()), Locked([Answer]())]
            let perLoop = 5_000
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for (index, loop) in loops.enumerated() {
                    tasks.addTask {
                        for chunk in stride(from: 0, to: perLoop, by: 100) {
                            let first = index * perLoop + chunk
                            try await Self.submit(first..<(first + 100), to: reader, on: loop, into: answers[index])
                        }
                    }
                }
                try await tasks.waitForAll()
            }
            #expect(await eventually { answers.allSatisfy { $0.withLock { $0.count } == perLoop } })
            for (index, lane) in answers.enumerated() {
                let seen = lane.withLock { $0 }
                #expect(seen.count == perLoop)
                #expect(Set(seen.map(\.request)) == Set((index * perLoop)..<((index + 1) * perLoop)))
                #expect(seen.allSatisfy { $0.value == $0.request * 3 && $0.isOnItsLoop })
            }
            #expect(runs.withLock { $0.count == 2 * perLoop && $0.values.allSatisfy { $0 == 1 } })
            await reader.shutdown()
            try await group.shutdownGracefully()
        }

        /// With one reader thread, answers reach a loop in the order its reads were submitted, across
        /// batches.
        @Test func oneReaderAnswersInTheOrderOfSubmission() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let reader = DiskReader<Int, Int>(threads: 1, loops: [loop], batchLimit: 7) { $0 + 1 }
            reader.start()
            let answers = Locked([Answer]())
            for chunk in stride(from: 0, to: 2_000, by: 50) {
                try await Self.submit(chunk..<(chunk + 50), to: reader, on: loop, into: answers)
            }
            #expect(await eventually { answers.withLock { $0.count } == 2_000 })
            let seen = answers.withLock { $0 }
            #expect(seen.map(\.request) == Array(0..<2_000))
            #expect(seen.allSatisfy { $0.value == $0.request + 1 && $0.isOnItsLoop })
            await reader.shutdown()
            try await group.shutdownGracefully()
        }

        /// A read held up on its reader thread (a page that is not resident) does not hold up the
        /// reads queued behind it, which another reader takes after the stall limit, nor the loop,
        /// which keeps running its other work; the held read is answered once it is let go.
        @Test func aHeldReadHoldsUpNeitherTheReadsBehindItNorTheLoop() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let loop = group.next()
            let held = DispatchSemaphore(value: 0)
            let isHolding = Locked(false)
            let reader = DiskReader<Int, Int>(threads: 2, loops: [loop], stallLimit: .milliseconds(1)) { request in
                if request == 0 {
                    isHolding.withLock { $0 = true }
                    held.wait()
                }
                return request
            }
            reader.start()
            let answers = Locked([Answer]())
            try await Self.submit(0..<1, to: reader, on: loop, into: answers)
            #expect(await eventually { isHolding.withLock { $0 } })
            try await Self.submit(1..<51, to: reader, on: loop, into: answers)
            #expect(await eventually { answers.withLock { $0.count } == 50 })
            // The loop itself still runs other work at once.
            #expect(try await loop.submit { 42 }.get() == 42)
            #expect(answers.withLock { $0.map(\.request) } == Array(1..<51))
            held.signal()
            #expect(await eventually { answers.withLock { $0.count } == 51 })
            #expect(answers.withLock { $0.last } == Answer(request: 0, value: 0, isOnItsLoop: true))
            await reader.shutdown()
            try await group.shutdownGracefully()
        }

        /// A read submitted from a loop the reader does not serve is refused at once (the caller
        /// then reads another way); one submitted after the shutdown is answered `Stopped`.
        @Test func refusesOtherLoopsAndAnswersStoppedAfterTheShutdown() async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
            let loops = Array(group.makeIterator())
            let reader = DiskReader<Int, Int>(threads: 1, loops: [loops[0]]) { $0 }
            reader.start()
            let other = try await loops[1].submit { reader.submit(1, on: loops[1]) { _ in } }.get()
            #expect(!other)
            await reader.shutdown()
            let stopped = Locked<Bool?>(nil)
            let isSubmitted = try await loops[0].submit {
                reader.submit(2, on: loops[0]) { result in
                    stopped.withLock { $0 = (try? result.get()) == nil }
                }
            }.get()
            #expect(isSubmitted)
            #expect(await eventually { stopped.withLock { $0 } == true })
            try await group.shutdownGracefully()
        }
    }
#endif
