import Foundation
import Stash
import StashHTTP

// A small app: a photo cache on disk and a loader in front of it.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("app-cost-\(getpid())")
let cache = try DiskCache(directory: directory, sizeLimit: .megabytes(10))
try cache.store(Data("hello".utf8), forKey: "greeting")
let loader = ResourceLoader(cache: cache)
print(try cache.data(forKey: "greeting")?.count ?? 0, loader)
try FileManager.default.removeItem(at: directory)
