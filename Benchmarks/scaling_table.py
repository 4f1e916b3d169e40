#!/usr/bin/env python3
"""Turns Benchmarks/out/scaling.jsonl (run-scaling.sh) into markdown: medians over the
rounds of each cell, Stash beside python-diskcache, and the ratio diskcache / Stash
(above 1: Stash is faster)."""

import json
import statistics
import sys
from collections import defaultdict

WORKLOADS = ["get-hit", "hit-write-on-close", "get-miss", "set", "set-full", "delete", "open"]


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e3:.1f} µs"


def main(path: str) -> None:
    cells = defaultdict(list)
    throughput = []
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if row["workload"] == "get-hit-throughput":
                throughput.append(row)
                continue
            value = row.get("ns_per_op", row.get("bytes"))
            cells[(row["impl"], row["workload"], row["entries"])].append(value)
    sizes = sorted({n for (_, _, n) in cells})
    print("| entries | workload | Stash | diskcache | ratio |")
    print("|---:|---|---:|---:|---:|")
    for n in sizes:
        for workload in WORKLOADS + ["index-bytes-per-entry"]:
            stash = cells.get(("stash", workload, n))
            other = cells.get(("diskcache", workload, n))
            if stash and not other:
                print(f"| {n:,} | {workload} (per hit) | {fmt(statistics.median(stash))} | — | |")
                continue
            if not stash or not other:
                continue
            s, d = statistics.median(stash), statistics.median(other)
            if workload == "index-bytes-per-entry":
                print(f"| {n:,} | index bytes per entry | {s:.0f} | {d:.0f} | |")
            else:
                print(f"| {n:,} | {workload} | {fmt(s)} | {fmt(d)} | {d / s:.2f}× |")
    if throughput:
        print()
        print("| get-hit throughput (1 KiB, 10k entries) | hits/s |")
        print("|---|---:|")
        for row in throughput:
            print(f"| {row['workers']} | {row['hits_per_second']:,} |")


if __name__ == "__main__":
    main(sys.argv[1])
