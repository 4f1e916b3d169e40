#if Serve
    import Foundation
    import Stash
    import StashHTTP
    import Testing

    // The names the documentation's samples use without defining them: a sample reads as a fragment of an
    // app, and these stand for the app's own values. The samples are compiled, never run.

    let data = Data("a photo".utf8)
    let jpeg = Data([0xFF, 0xD8, 0xFF])
    let draft = Data("a draft".utf8)
    let notes = Data("notes".utf8)
    let token = Data("token".utf8)
    let url = URL(string: "https://example.com/photos/42.jpg")!
    let photoURL = url
    let videoURL = URL(string: "https://example.com/videos/7.mp4")!
    let feedURL = URL(string: "https://example.com/feed.json")!
    let photoJSONURL = URL(string: "https://example.com/photos/42.json")!

    struct Photo: Codable, Sendable {
        var id = 42
        var title = "Harbour"
    }

    let photo = Photo()

    func show(_ data: Data) {}

    /// A disk cache that a sample uses as if the app had opened it.
    var cache: DiskCache { fatalError("The documentation's samples are compiled, not run.") }
    /// A loader that a sample uses as if the app had made it.
    var loader: ResourceLoader { fatalError("The documentation's samples are compiled, not run.") }
    /// A two-tier cache of photos that a sample uses as if the app had opened it.
    var photos: Cache<Photo> { fatalError("The documentation's samples are compiled, not run.") }

    #if canImport(UIKit)
        import UIKit

        // The iOS article's (CachingPhotosInAnIOSApp.md): the store its first sample defines, which the
        // samples after it use as the app's, and the gallery's photos.

        /// The app's photo store, declared as the article's first sample declares it.
        @MainActor final class PhotoStore {
            let loader: ResourceLoader
            let images: ValueLoader<UIImage>

            init() throws { fatalError("The documentation's samples are compiled, not run.") }
        }

        /// The store that a sample uses as if the app had made it.
        @MainActor var store: PhotoStore { fatalError("The documentation's samples are compiled, not run.") }
        /// The gallery's photos, one per item.
        let photoURLs = [photoURL]
    #endif

    @Test func theSamplesCompile() {
        // Compiling this target is the test; this names one sample so that the target is never empty.
        _ = sampleGettingStarted1
    }
#endif
