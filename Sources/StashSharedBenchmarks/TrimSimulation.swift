#if Benchmarks
    import Foundation

    /// Replays request traces (`time,key,size` CSV, as Benchmarks/traces writes them) against a model
    /// of the PostgreSQL tier's batch trim, in two orders: FIFO (the tier's: oldest insertion first,
    /// nothing written on a hit) and LRU (oldest access first, which costs a write per hit).
    ///
    /// The model is the tier's: a miss stores the object; when a tenth of the limit has been
    /// written since the last trim and the total is over the limit, entries go in order until the
    /// total is at most 90 % of it. Cache sizes are fractions of the trace's working set.
    struct TrimSimulation {
        enum Order: String, CaseIterable {
            case fifo = "FIFO (insertion)"
            case lru = "LRU (access)"
            /// FIFO with a second chance: a hit marks the entry (a write only if it was unmarked);
            /// the trim moves marked entries to the back, unmarked, instead of deleting them.
            case clock = "CLOCK (second chance)"
            var name: String { String(rawValue.prefix { $0 != " " }) }
        }

        struct Result {
            var requests = 0
            var hits = 0
            var bytesRequested = 0
            var bytesHit = 0
            /// Hits that must write to the row (LRU: every hit; CLOCK: the first since the last trim pass).
            var hitWrites = 0
            var writesPerHit: Double { Double(hitWrites) / Double(max(1, hits)) }
            var objectRatio: Double { Double(hits) / Double(max(1, requests)) }
            var byteRatio: Double { Double(bytesHit) / Double(max(1, bytesRequested)) }
        }

        let traces: [String]
        let fractions: [Double]

        func run() throws {
            print("Batch trim of the shared tier: FIFO vs LRU, object and byte hit ratios")
            print("(a tenth of the limit written triggers a trim down to 90 %; sizes are fractions of the working set)")
            print(
                "trace".padding(toLength: 16, withPad: " ", startingAt: 0) + pad("cache", 7)
                    + Order.allCases.map { pad($0.name + " obj", 11) + pad("byte", 8) }.joined()
                    + pad("CLOCK writes/hit", 18))
            for path in traces {
                let (keys, sizes) = try Self.load(path)
                var seen = [Int: Int]()
                for (key, size) in zip(keys, sizes) { seen[key] = size }
                let workingSet = seen.values.reduce(0, +)
                let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
                for fraction in fractions {
                    let limit = Int(Double(workingSet) * fraction)
                    let results = Order.allCases.map {
                        Self.simulate(keys: keys, sizes: sizes, limit: limit, order: $0)
                    }
                    let cells = results.map {
                        pad(format($0.objectRatio * 100, 1) + " %", 11) + pad(format($0.byteRatio * 100, 1) + " %", 8)
                    }
                    print(
                        name.padding(toLength: 16, withPad: " ", startingAt: 0)
                            + pad(format(fraction * 100, 0) + " %", 7)
                            + cells.joined() + pad(format(results[2].writesPerHit, 2), 18))
                }
            }
        }

        /// The trace's keys (renumbered densely) and sizes.
        static func load(_ path: String) throws -> (keys: [Int], sizes: [Int]) {
            let text = try String(contentsOfFile: path, encoding: .ascii)
            var keys: [Int] = []
            var sizes: [Int] = []
            var dense = [Int: Int]()
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: ",")
                guard fields.count == 3, let key = Int(fields[1]), let size = Int(fields[2]) else { continue }
                let id: Int
                if let known = dense[key] {
                    id = known
                } else {
                    id = dense.count
                    dense[key] = id
                }
                keys.append(id)
                sizes.append(size)
            }
            return (keys, sizes)
        }

        /// One replay.
        ///
        /// Entries sit in a doubly linked list in trim order (oldest first); a hit moves
        /// its entry to the end under LRU and leaves it in place under FIFO.
        static func simulate(keys: [Int], sizes: [Int], limit: Int, order: Order) -> Result {
            let count = (keys.max() ?? -1) + 1
            var present = [Bool](repeating: false, count: count)
            var previous = [Int](repeating: -1, count: count)
            var next = [Int](repeating: -1, count: count)
            var size = [Int](repeating: 0, count: count)
            var referenced = [Bool](repeating: false, count: count)
            var head = -1
            var tail = -1
            var total = 0
            var writtenSinceTrim = 0
            let lowWater = limit - limit / 10
            var result = Result()

            func unlink(_ id: Int) {
                if previous[id] >= 0 { next[previous[id]] = next[id] } else { head = next[id] }
                if next[id] >= 0 { previous[next[id]] = previous[id] } else { tail = previous[id] }
                previous[id] = -1
                next[id] = -1
            }
            func append(_ id: Int) {
                previous[id] = tail
                next[id] = -1
                if tail >= 0 { next[tail] = id } else { head = id }
                tail = id
            }

            for (key, bytes) in zip(keys, sizes) {
                result.requests += 1
                result.bytesRequested += bytes
                if present[key] {
                    result.hits += 1
                    result.bytesHit += bytes
                    switch order {
                    case .fifo:
                        break
                    case .lru:
                        result.hitWrites += 1
                        unlink(key)
                        append(key)
                    case .clock:
                        if !referenced[key] {
                            referenced[key] = true
                            result.hitWrites += 1
                        }
                    }
                    continue
                }
                guard bytes <= limit else { continue }  // the tier refuses a body over its limit
                present[key] = true
                size[key] = bytes
                append(key)
                total += bytes
                writtenSinceTrim += bytes
                if writtenSinceTrim >= max(1, limit / 10) {
                    writtenSinceTrim = 0
                    if total > limit {
                        while total > lowWater, head >= 0 {
                            let victim = head
                            unlink(victim)
                            if referenced[victim] {
                                referenced[victim] = false
                                append(victim)
                                continue
                            }
                            present[victim] = false
                            total -= size[victim]
                        }
                    }
                }
            }
            return result
        }
    }
#endif
