#!/usr/bin/env python3
"""Puts Stash's trace-replay miss ratios beside libCacheSim's, as markdown tables.

    python3 Benchmarks/traces/policy_table.py STASH.jsonl LIBCACHESIM.jsonl [--summary | --bytes]

STASH.jsonl: lines of `StashBenchmarks replay … --json` (mode "simulated"; any mix of traces,
cache sizes given as percentages, policies and low-water marks). LIBCACHESIM.jsonl: lines of
`libcachesim_replay.py` (replay.jsonl). Cells are object miss ratio / byte miss ratio.

Without options: one table per trace (every policy of both). With --bytes: byte miss ratios at
low-water mark 1.0 on the lognormal traces. With --summary: one table of
object miss ratios, a row per trace and cache size, for Stash's default policy (tinylfu)
at low-water marks 1.0 and 0.9 and libCacheSim's LRU, S3-FIFO, SIEVE, W-TinyLFU and Belady.
"""
import json
import sys
from collections import defaultdict

STASH_ORDER = ["lru", "fifo", "sieve", "s3-fifo", "tinylfu", "tinylfu-bytes"]
LCS_ORDER = ["LRU", "FIFO", "S3-FIFO", "SIEVE", "W-TinyLFU", "Belady", "BeladySize"]


def load(stash_path, lcs_path):
    cells = defaultdict(dict)  # (trace, percent) -> {column: (object, byte, note)}
    for line in open(stash_path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("mode") != "simulated" or not r["cache_size"].endswith("%"):
            continue
        percent = float(r["cache_size"].rstrip("%"))
        column = f"Stash {r['policy']} (lwm {r['low_water_mark']})"
        cells[(r["trace"], percent)][column] = (r["object_miss_ratio"], r["byte_miss_ratio"], "")
    for line in open(lcs_path):
        r = json.loads(line)
        percent = round(r["cache_fraction"] * 100, 6)
        column = f"libCacheSim {r['policy']}"
        cells[(r["trace"], percent)][column] = (r["object_miss_ratio"], r["byte_miss_ratio"], r.get("note", ""))
    return cells


def columns_for(cells):
    present = {column for row in cells.values() for column in row}
    ordered = []
    for lwm in ("1.0", "0.9"):
        ordered += [f"Stash {p} (lwm {lwm})" for p in STASH_ORDER]
    ordered += [f"libCacheSim {p}" for p in LCS_ORDER]
    return [c for c in ordered if c in present] + sorted(present - set(ordered))


def size_label(percent):
    return f"{percent:g} %"


def per_trace(cells):
    out = []
    traces = sorted({trace for trace, _ in cells})
    for trace in traces:
        percents = sorted(p for t, p in cells if t == trace)
        rows = {p: cells[(trace, p)] for p in percents}
        out.append(f"### {trace}\n")
        out.append("Object miss ratio / byte miss ratio; lower is better; **bold**: lowest object miss "
                   "ratio of the online policies (Belady excluded).\n")
        out.append("| policy | " + " | ".join(size_label(p) for p in percents) + " |")
        out.append("|---|" + "---:|" * len(percents))
        best = {}
        for p in percents:
            online = [v[0] for c, v in rows[p].items() if "Belady" not in c]
            best[p] = min(online) if online else None
        for column in columns_for(rows):
            values = []
            for p in percents:
                if column not in rows[p]:
                    values.append("–")
                    continue
                obj, byte, note = rows[p][column]
                text = f"{obj:.4f} / {byte:.4f}"
                if best[p] is not None and obj == best[p]:
                    text = f"**{obj:.4f}** / {byte:.4f}"
                if note:
                    text += " \\*"
                values.append(text)
            out.append(f"| {column} | " + " | ".join(values) + " |")
        for p in percents:
            for column in columns_for(rows):
                note = rows[p].get(column, (0, 0, ""))[2]
                if note:
                    out.append(f"\n\\* {column} at {size_label(p)}: {note}")
        out.append("")
    return "\n".join(out)


def summary(cells):
    wanted = [("Stash tinylfu (lwm 1.0)", "Stash default, lwm 1.0"),
              ("Stash tinylfu (lwm 0.9)", "Stash default, lwm 0.9"),
              ("libCacheSim LRU", "LRU"), ("libCacheSim S3-FIFO", "S3-FIFO"),
              ("libCacheSim SIEVE", "SIEVE"), ("libCacheSim W-TinyLFU", "W-TinyLFU"),
              ("libCacheSim Belady", "Belady")]
    out = ["| trace | cache | " + " | ".join(label for _, label in wanted) + " |",
           "|---|---:|" + "---:|" * len(wanted)]
    for (trace, percent) in sorted(cells):
        row = cells[(trace, percent)]
        name = trace.removesuffix(".csv").removesuffix("-1000000").removeprefix("zipf-")
        values = []
        for column, _ in wanted:
            values.append(f"{row[column][0]:.4f}" if column in row else "–")
        out.append(f"| {name} | {size_label(percent)} | " + " | ".join(values) + " |")
    return "\n".join(out)


def byte_summary(cells):
    """Byte miss ratios at low-water mark 1.0 on the traces with varied sizes (with fixed sizes
    they equal the object miss ratios)."""
    wanted = [("Stash tinylfu (lwm 1.0)", "Stash tinylfu"),
              ("Stash tinylfu-bytes (lwm 1.0)", "Stash tinylfu-bytes"),
              ("Stash s3-fifo (lwm 1.0)", "Stash S3-FIFO"), ("Stash sieve (lwm 1.0)", "Stash SIEVE"),
              ("Stash lru (lwm 1.0)", "Stash LRU"),
              ("libCacheSim LRU", "LRU"), ("libCacheSim S3-FIFO", "S3-FIFO"),
              ("libCacheSim W-TinyLFU", "W-TinyLFU"), ("libCacheSim BeladySize", "BeladySize")]
    out = ["| trace | cache | " + " | ".join(label for _, label in wanted) + " |",
           "|---|---:|" + "---:|" * len(wanted)]
    for (trace, percent) in sorted(cells):
        if "fixed" in trace:
            continue
        row = cells[(trace, percent)]
        name = trace.removesuffix(".csv").removesuffix("-1000000").removeprefix("zipf-")
        values = [f"{row[column][1]:.4f}" if column in row else "–" for column, _ in wanted]
        out.append(f"| {name} | {size_label(percent)} | " + " | ".join(values) + " |")
    return "\n".join(out)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    cells = load(args[0], args[1])
    if "--bytes" in sys.argv:
        print(byte_summary(cells))
    else:
        print(summary(cells) if "--summary" in sys.argv else per_trace(cells))


if __name__ == "__main__":
    main()
