#if Tool
    import Foundation
    import Testing

    /// `stash demo`: it finishes quickly, leaves nothing behind, and tells the truth about requests.
    @Suite struct DemoCommandTests {
        @Test func demoServesCachedPhotosWithNoOriginRequestsAndRevalidatesExactlyTheChangedOnes() async throws {
            // The one-minute budget is a benchmark-style claim (about 3.5 s alone on 2 cores), not
            // asserted here: beside the rest of the parallel suite its wall time means nothing.
            let result = try await StashTool.run(["demo", "--json"])
            #expect(result.status == 0, "\(result.error)")

            let report = try #require(try JSONSerialization.jsonObject(with: result.output) as? [String: Any])
            let steps = try #require(report["steps"] as? [[String: Any]])
            #expect(steps.map { $0["name"] as? String } == ["browse", "revisit", "relaunch", "revalidate"])
            func value(_ step: Int, _ key: String) -> Int { steps[step][key] as? Int ?? -1 }

            // 1. Every photo downloaded once; the cache evicted to stay within 10 MB.
            #expect(report["photos"] as? Int == 300)
            #expect(value(0, "downloads") == 300)
            #expect(value(0, "originRequests") == 300)
            #expect(value(0, "evictions") > 0)
            #expect(value(0, "cachedSize") <= 10_000_000)
            #expect(report["sizeLimit"] as? Int == 10_000_000)

            // 2 and 3. The recently viewed photos come from the cache with no request, also after relaunch.
            // How many photos stay is the eviction policy's choice (21 to the cap of 30 in 55 runs with
            // TinyLFU, fewer when it kept large ones); step 4 needs more than the 5 it changes.
            let recent = try #require(report["recentPhotos"] as? [Int])
            #expect(recent.count > 5)
            for step in [1, 2] {
                #expect(value(step, "originRequests") == 0, "step \(step + 1)")
                #expect(value(step, "views") == recent.count)
                #expect(value(step, "memoryHits") + value(step, "diskHits") == recent.count)
            }

            // 4. HTTP revalidation: 304 for the unchanged photos, 200 for exactly the changed ones.
            let changed = try #require(report["changedPhotos"] as? [Int])
            #expect(changed.count == 5)
            #expect(report["refreshedPhotos"] as? [Int] == changed)
            #expect(value(3, "originRequests") == recent.count)
            #expect(value(3, "notModified") == recent.count - 5)
            #expect(value(3, "revalidated") == recent.count - 5)
            #expect(value(3, "downloads") == 5)
            #expect(steps.allSatisfy { $0["staleViews"] as? Int == 0 })

            // 5. The summary adds the steps up.
            let summary = try #require(report["summary"] as? [String: Any])
            #expect(summary["originRequests"] as? Int == 300 + recent.count)
            #expect(summary["views"] as? Int == 300 + 3 * recent.count)
            #expect(summary["downloads"] as? Int == 305)

            // No temporary directory is left behind.
            let directory = try #require(report["directory"] as? String)
            #expect(report["temporaryDirectory"] as? Bool == true)
            #expect(!FileManager.default.fileExists(atPath: directory))
        }

        @Test func demoTellsTheStoryInTextAndKeepsAGivenDirectory() async throws {
            try await withTemporaryDirectory { root in
                let dir = root.appendingPathComponent("demo")
                let result = try await StashTool.run(["demo", "--photos", "60", "--dir", dir.path])
                #expect(result.status == 0, "\(result.error)")
                let lines = result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let headings = lines.filter { $0.first?.isNumber == true }.map { String($0.prefix(2)) }
                #expect(headings == ["1.", "2.", "3.", "4.", "5."])
                #expect(lines.filter { $0 == "   origin requests: 0" }.count == 2, "\(result.text)")
                #expect(lines.contains { $0.hasPrefix("1. Browse the gallery: 60 photos") })
                #expect(
                    lines.contains(
                        "   the photos downloaded again are exactly the changed ones; every photo shown matches the origin"
                    )
                )
                #expect(lines.contains { $0.hasPrefix("   step ") && $0.hasSuffix("memory  disk  304  200") })
                #expect(lines.last(where: { !$0.isEmpty })?.hasPrefix("Finished in ") == true)

                // The cache stays for inspection, consistent.
                let verify = try await StashTool.run(["verify", "--dir", dir.path])
                #expect(verify.status == 0)
                let list = try await StashTool.run(["ls", "--dir", dir.path])
                #expect(list.text.contains("/photos/"))

                let again = try await StashTool.run(["demo", "--dir", dir.path])
                #expect(again.status == 64)
                #expect(
                    again.error
                        == "stash: \(dir.path) is not empty: give 'stash demo --dir' a new or empty directory, so that the demo starts from an empty cache.\n"
                )
            }
        }
    }
#endif
