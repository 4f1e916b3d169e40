#if Serve
    import NIOCore

    /// A request body streamed from the client connection to the origin, with back-pressure: when
    /// the origin reads slower than the client sends, the connection stops reading.
    struct RequestBody: Sendable {
        typealias Sequence = NIOThrowingAsyncSequenceProducer<
            ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Delegate
        >

        /// Turns reading from the client connection back on when the origin wants more.
        final class Delegate: NIOAsyncSequenceProducerDelegate, Sendable {
            let channel: any Channel

            init(channel: any Channel) { self.channel = channel }

            func produceMore() {
                channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
            }

            func didTerminate() {
                channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
            }
        }

        let sequence: Sequence

        /// A body and the source the connection feeds it from.
        static func make(channel: any Channel) -> (RequestBody, Sequence.Source) {
            let made = Sequence.makeSequence(
                elementType: ByteBuffer.self, failureType: (any Error).self,
                backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8),
                finishOnDeinit: true, delegate: Delegate(channel: channel))
            return (RequestBody(sequence: made.sequence), made.source)
        }
    }
#endif
