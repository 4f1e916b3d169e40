import Foundation
import Synchronization

func collect<Body: AsyncSequence<Data, any Error>>(_ body: Body) {}  // flagged
let counter = Mutex(0)  // flagged
func finite<S: AsyncSequence>(_ s: S) where S.Failure == Never {}  // flagged
let handler: (Int) throws(CancellationError) -> Void = { _ in }  // flagged
func next<I: AsyncIteratorProtocol>(_ i: inout I) async throws { _ = try await i.next(isolation: nil) }  // flagged

// Fine: limited to the Swift 6 releases, off Apple platforms, or not naming Failure.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func limited<Body: AsyncSequence<Data, any Error>>(_ body: Body) { _ = Mutex(0) }
@available(macOS 15, *)
func macOnly() { _ = Mutex(1) }  // flagged: iOS, tvOS, watchOS and visionOS stay at their minimums
func gated() {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        _ = Mutex(2)
    } else {
        _ = Mutex(3)  // flagged
    }
    guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
    _ = Mutex(4)
}
#if os(Linux)
    let linuxCounter = Mutex(5)
#endif
func chunks<Body: AsyncSequence>(_ body: Body) where Body.Element == Data {}
func outcome(_ r: Result<Int, any Error>.Failure) {}
func typed() throws(CancellationError) {}
