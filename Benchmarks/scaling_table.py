#!/usr/bin/env python3
"""Turns Benchmarks/out/scaling.jsonl (run-scaling.sh) into markdown: medians over the
rounds of each cell, Stash beside python-diskcache, and the ratio diskcache / Stash
(above 1: Stash is faster); with the SQLite floor's rows (floor/sqlitefloor.c), also the
floor and diskcache / floor: the most any cache committing one SQLite transaction per
write could be ahead of diskcache."""

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
    has_floor = any(impl == "sqlite-floor" for (impl, _, _) in cells)
    if has_floor:
        print("| entries | workload | Stash | diskcache | ratio | SQLite floor | diskcache / floor |")
        print("|---:|---|---:|---:|---:|---:|---:|")
    else:
        print("| entries | workload | Stash | diskcache | ratio |")
        print("|---:|---|---:|---:|---:|")
    for n in sizes:
        for workload in WORKLOADS + ["index-bytes-per-entry"]:
            stash = cells.get(("stash", workload, n))
            other = cells.get(("diskcache", workload, n))
            floor = cells.get(("sqlite-floor", workload, n))
            pad = " | |" if has_floor else ""
            if stash and not other:
                print(f"| {n:,} | {workload} (per hit) | {fmt(statistics.median(stash))} | — | |{pad}")
                continue
            if not stash or not other:
                continue
            s, d = statistics.median(stash), statistics.median(other)
            f = statistics.median(floor) if floor else None
            if workload == "index-bytes-per-entry":
                extra = (f" {f:.0f} | |" if f is not None else " | |") if has_floor else ""
                print(f"| {n:,} | index bytes per entry | {s:.0f} | {d:.0f} | |{extra}")
            else:
                extra = (f" {fmt(f)} | {d / f:.2f}× |" if f is not None else " — | |") if has_floor else ""
                print(f"| {n:,} | {workload} | {fmt(s)} | {fmt(d)} | {d / s:.2f}× |{extra}")
    immediate = [w for w in ("set", "delete", "set-full") if any(k[1] == w + "-immediate" for k in cells)]
    if immediate:
        print()
        print("WriteMode.immediate (one commit per store), beside diskcache and the SQLite floor's store:")
        print()
        print("| entries | workload | Stash immediate | diskcache | ratio | SQLite floor | Stash / floor |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        for n in sizes:
            for workload in immediate:
                stash = cells.get(("stash", workload + "-immediate", n))
                other = cells.get(("diskcache", workload, n))
                floor = cells.get(("sqlite-floor", workload, n))
                if not stash or not other:
                    continue
                s, d = statistics.median(stash), statistics.median(other)
                f = statistics.median(floor) if floor else None
                extra = f" {fmt(f)} | {s / f:.2f}× |" if f is not None else " — | |"
                print(f"| {n:,} | {workload} | {fmt(s)} | {fmt(d)} | {d / s:.2f}× |{extra}")
    if throughput:
        print()
        print("| get-hit throughput (1 KiB, 10k entries) | hits/s |")
        print("|---|---:|")
        for row in throughput:
            print(f"| {row['workers']} | {row['hits_per_second']:,} |")


if __name__ == "__main__":
    main(sys.argv[1])
