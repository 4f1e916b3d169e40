#!/usr/bin/env python3
"""Medians over several rounds of run-comparison.sh: each argument is a round's
results directory (Benchmarks/out/results copied aside). Prints, per workload and
value size, Stash's and diskcache's median of the rounds' medians, and the ratio
diskcache / Stash computed in each round, then its median (above 1: Stash is faster)."""

import json
import os
import statistics
import sys
from collections import defaultdict

ORDER = ["get-hit", "get-miss", "set", "set-full", "delete"]


def main(rounds: list[str]) -> None:
    cells = defaultdict(dict)  # (workload, size) -> {round: {impl: ns}}
    for index, directory in enumerate(rounds):
        for name in os.listdir(directory):
            with open(os.path.join(directory, name)) as handle:
                for line in handle:
                    line = line.strip()
                    if not line.startswith("{"):
                        continue
                    row = json.loads(line)
                    if "median_ns_per_op" not in row:
                        continue
                    impl = row["impl"]
                    if impl == "diskcache" and row.get("policy", "least-recently-stored") != "least-recently-stored":
                        continue
                    cells[(row["workload"], row["value_size"])].setdefault(index, {})[impl] = row["median_ns_per_op"]
    print("| workload | size | Stash µs | diskcache µs | floor µs | diskcache/Stash (median of rounds) | rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    keys = sorted(cells, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[0], k[1]))
    for workload, size in keys:
        by_round = cells[(workload, size)]
        stash = [r["stash"] for r in by_round.values() if "stash" in r]
        other = [r["diskcache"] for r in by_round.values() if "diskcache" in r]
        floor = [r["floor"] for r in by_round.values() if "floor" in r]
        ratios = [r["diskcache"] / r["stash"] for r in by_round.values() if "stash" in r and "diskcache" in r]
        label = f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"
        unit = 1e6 if workload.startswith("open") else 1e3
        def cell(values):
            return f"{statistics.median(values) / unit:.1f}" if values else "—"
        ratio = f"{statistics.median(ratios):.2f}×" if ratios else "—"
        print(f"| {workload} | {label} | {cell(stash)} | {cell(other)} | {cell(floor)} | {ratio} | {len(ratios)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
