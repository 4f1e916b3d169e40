#if Serve
    import Foundation
    import Logging
    import NIOHTTP1
    import Stash
    @testable import StashServer
    import Testing

    /// What the proxy knows of each URL's `Vary` marker stays bounded however many URLs it has
    /// served, and forgetting never makes it wrong: a URL with a marker is never forgotten, and a
    /// forgotten URL is one whose marker is read again.
    @Suite struct ServeVaryMarkersTests {
        static let marker = ResponseStore.VaryMarker(names: ["accept-language"], generation: "g1")

        /// 1,000 URLs without a marker into room for 100: exactly 100 stay known, the rest are
        /// unknown (read again on their next disk hit), not wrongly known.
        @Test func keepsAtMostItsLimitOfURLsWithoutAMarker() {
            let markers = VaryMarkers(plainLimit: 100)
            for index in 0..<1000 { markers.set(nil, for: "/u/\(index)") }
            #expect(markers.counts.plain == 100)
            #expect(markers.counts.markers == 0)
            var known = 0
            for index in 0..<1000 {
                switch markers.knowledge(of: "/u/\(index)") {
                case .none: break
                case .some(nil): known += 1
                case .some(.some): Issue.record("/u/\(index) has no marker")
                }
            }
            #expect(known == 100)
            // The newest came in last: the hand forgot the oldest first.
            #expect(markers.knowledge(of: "/u/999") == .some(nil))
            #expect(markers.knowledge(of: "/u/0") == .none)
        }

        /// CLOCK: a URL looked up since the hand last passed it is passed over once; the first one
        /// not looked up is forgotten.
        @Test func aURLLookedUpIsKeptOverOneThatWasNot() {
            let markers = VaryMarkers(plainLimit: 4)
            for base in ["a", "b", "c", "d"] { markers.set(nil, for: base) }
            #expect(markers.knowledge(of: "a") == .some(nil))
            markers.set(nil, for: "e")
            #expect(markers.knowledge(of: "a") == .some(nil))
            #expect(markers.knowledge(of: "b") == .none)
            #expect(markers.knowledge(of: "e") == .some(nil))
            #expect(markers.counts.plain == 4)
        }

        /// A URL with a marker is never forgotten to make room: its variants may be in the memory
        /// tier only, under keys that only the marker gives.
        @Test func aURLWithAMarkerIsNeverForgottenForRoom() {
            let markers = VaryMarkers(plainLimit: 10)
            markers.set(Self.marker, for: "/varies")
            for index in 0..<1000 { markers.set(nil, for: "/u/\(index)") }
            #expect(markers.knowledge(of: "/varies") == .some(Self.marker))
            #expect(markers.counts == (markers: 1, plain: 10))
        }

        /// A marker replaces the knowledge that a URL had none and the other way round; a read
        /// that raced a store (`ifUnknown`) changes nothing known; `forget` and `removeAll` leave
        /// the URLs unknown, and a freed slot is reused.
        @Test func replacesAndForgetsWhatItKnows() {
            let markers = VaryMarkers(plainLimit: 2)
            markers.set(nil, for: "/x")
            markers.set(Self.marker, for: "/x")
            #expect(markers.knowledge(of: "/x") == .some(Self.marker))
            markers.set(nil, for: "/x", ifUnknown: true)
            #expect(markers.knowledge(of: "/x") == .some(Self.marker))
            markers.set(nil, for: "/x")
            #expect(markers.knowledge(of: "/x") == .some(nil))
            markers.set(Self.marker, for: "/y", ifUnknown: true)
            #expect(markers.knowledge(of: "/y") == .some(Self.marker))
            markers.forget(base: "/x")
            #expect(markers.knowledge(of: "/x") == .none)
            markers.set(nil, for: "/z")
            markers.set(nil, for: "/w")
            #expect(markers.counts == (markers: 1, plain: 2))
            #expect(markers.knowledge(of: "/z") == .some(nil))
            #expect(markers.knowledge(of: "/w") == .some(nil))
            markers.removeAll()
            #expect(markers.knowledge(of: "/y") == .none)
            #expect(markers.counts == (markers: 0, plain: 0))
        }

        /// The bound follows the limit: one URL per ``ResponseStore/bytesPerPlainURL`` bytes of it,
        /// so that a 64 MiB limit knows 65,536 URLs (a working set of 20,000 objects reads no
        /// marker twice), within the minimum and maximum.
        @Test func theBoundFollowsTheMemoryLimit() {
            func limit(_ memoryLimit: Int) -> Int {
                ResponseStore(
                    origin: URL(string: "http://127.0.0.1:9")!, memoryLimit: memoryLimit, disk: nil, shared: nil,
                    sharedItemLimit: 0, logger: Logger(label: "test")
                ).plainURLLimit
            }
            #expect(limit(64 << 20) == 65_536)
            #expect(limit(1 << 20) == ResponseStore.minimumPlainURLs)
            #expect(limit(1 << 40) == ResponseStore.maximumPlainURLs)
        }

        /// Disk reads of 6,000 URLs through a proxy's store with a real disk tier and a 4 MiB
        /// limit: it keeps what it knows of at most ``ResponseStore/minimumPlainURLs`` URLs without
        /// a marker, a URL with a marker on disk is known after the others, and a URL forgotten has
        /// its marker read again on its next disk read.
        @Test func theStoreKeepsABoundedKnowledgeOverManyDiskReads() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stash-serve-vary-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let disk = try DiskCache(directory: directory)
            defer { disk.close() }
            let store = ResponseStore(
                origin: URL(string: "http://127.0.0.1:9")!, memoryLimit: 4 << 20, disk: disk, shared: nil,
                sharedItemLimit: 0, logger: Logger(label: "test"))
            let varies = store.baseKey(target: "/varies")
            try disk.store(
                Data(), forKey: "serve-vary \(varies)",
                metadata: DiskCache.Metadata(extra: ["serve.vary-names": "accept-language", "serve.generation": "g1"]))
            _ = store.diskRead(base: varies, requestHeaders: HTTPHeaders())
            for index in 0..<6000 {
                let base = store.baseKey(target: "/u/\(index)")
                #expect(store.diskRead(base: base, requestHeaders: HTTPHeaders()) == nil)
            }
            #expect((4 << 20) / ResponseStore.bytesPerPlainURL <= ResponseStore.minimumPlainURLs)
            #expect(store.markerCounts == (markers: 1, plain: ResponseStore.minimumPlainURLs))
            #expect(store.hasKnownMarker(base: varies))
            let first = store.baseKey(target: "/u/0")
            #expect(store.markerKnowledge(of: first) == .none)
            _ = store.diskRead(base: first, requestHeaders: HTTPHeaders())
            #expect(store.markerKnowledge(of: first) == .some(nil))
        }
    }
#endif
