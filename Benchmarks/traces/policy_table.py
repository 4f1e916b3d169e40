#!/usr/bin/env python3
"""Puts Stash's trace-replay miss ratios beside libCacheSim's, as markdown tables.

    python3 Benchmarks/traces/policy_table.py STASH.jsonl LIBCACHESIM.jsonl [--summary | --memory | --bytes]

STASH.jsonl: lines of `StashBenchmarks replay … --json` (mode "simulated", and "memory" for the
MemoryCache replays; any mix of traces, cache sizes given as percentages, policies and low-water
marks). LIBCACHESIM.jsonl: lines of `libcachesim_replay.py` (replay.jsonl). Cells are object miss
ratio / byte miss ratio.

Without options: one table per trace (every policy of both). With --bytes: byte miss ratios at
low-water mark 1.0 on the lognormal traces. With --summary: the default policy (adaptive)
against the best of libCacheSim's practical policies (LRU, FIFO, S3-FIFO, SIEVE, ARC,
W-TinyLFU) and LRU with the issue's targets checked, the cost of lower low-water marks, and
byte miss ratios. With --memory: the memory tier's default (MemoryCache adaptive) against the
same targets.
"""
import json
import sys
from collections import defaultdict

STASH_ORDER = ["adaptive", "lru", "fifo", "sieve", "s3-fifo", "tinylfu", "tinylfu-bytes"]
MEMORY_ORDER = ["adaptive", "lru", "sieve", "s3-fifo"]
LCS_ORDER = ["LRU", "FIFO", "S3-FIFO", "SIEVE", "ARC", "W-TinyLFU", "Belady", "BeladySize"]
PRACTICAL = ["LRU", "FIFO", "S3-FIFO", "SIEVE", "ARC", "W-TinyLFU"]
LOW_WATER_MARKS = ("1.0", "0.99", "0.95", "0.9")


def load(stash_path, lcs_path):
    cells = defaultdict(dict)  # (trace, percent) -> {column: (object, byte, note)}
    for line in open(stash_path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("mode") not in ("simulated", "memory") or not r["cache_size"].endswith("%"):
            continue
        percent = float(r["cache_size"].rstrip("%"))
        if r["mode"] == "memory":
            column = f"Stash memory {r['policy']}"
        else:
            column = f"Stash {r['policy']} (lwm {r['low_water_mark']})"
        cells[(r["trace"], percent)][column] = (r["object_miss_ratio"], r["byte_miss_ratio"], "")
    for line in open(lcs_path):
        if not line.startswith("{"):
            continue  # libCacheSim's C code prints warnings on stdout too
        r = json.loads(line)
        percent = round(r["cache_fraction"] * 100, 6)
        column = f"libCacheSim {r['policy']}"
        cells[(r["trace"], percent)][column] = (r["object_miss_ratio"], r["byte_miss_ratio"], r.get("note", ""))
    return cells


def columns_for(cells):
    present = {column for row in cells.values() for column in row}
    ordered = []
    for lwm in LOW_WATER_MARKS:
        ordered += [f"Stash {p} (lwm {lwm})" for p in STASH_ORDER]
    ordered += [f"Stash memory {p}" for p in MEMORY_ORDER]
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


def short_name(trace):
    return trace.removesuffix(".csv").removesuffix("-1000000").removesuffix("-100000").removeprefix("zipf-")


def checked_points(cells, ours_label):
    """For each (trace, cache size) where `ours_label` and a practical libCacheSim policy were
    replayed: the row, our object miss ratio, the best practical one and its name, LRU's, and
    whether the issue's targets (within 0.02 of the best, within 0.01 of LRU) are met."""
    for (trace, percent) in sorted(cells):
        row = cells[(trace, percent)]
        ours = row.get(ours_label)
        practical = [(row[f"libCacheSim {p}"][0], p) for p in PRACTICAL if f"libCacheSim {p}" in row]
        if ours is None or not practical:
            continue
        best, which = min(practical)
        lru = row.get("libCacheSim LRU", (float("nan"),))[0]
        met = ours[0] <= best + 0.02 and ours[0] <= lru + 0.01
        yield trace, percent, row, ours[0], best, which, lru, met


def target_row(trace, percent, ours, best, which, lru, extras, met):
    """One row of a target table: ours, the best practical policy, LRU, `extras`, met or not."""
    cells = [short_name(trace), size_label(percent), f"{ours:.4f}", f"{best:.4f} ({which})", f"{ours - best:+.4f}",
             f"{lru:.4f}", f"{ours - lru:+.4f}"] + [f"{value:.4f}" for value in extras]
    return "| " + " | ".join(cells) + f" | {'yes' if met else '**no**'} |"


def summary(cells):
    """Object miss ratios of the default (adaptive) against the best practical libCacheSim
    policy and LRU, with the issue's targets checked; then the cost of lower low-water marks;
    then byte miss ratios."""
    out = ["| trace | cache | Stash adaptive | best of libCacheSim (which) | Δ best (≤ 0.02) | "
           "libCacheSim LRU | Δ LRU (≤ 0.01) | Stash tinylfu | Belady | met |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    met_count = total = 0
    for trace, percent, row, ours, best, which, lru, met in checked_points(cells, "Stash adaptive (lwm 1.0)"):
        tiny = row.get("Stash tinylfu (lwm 1.0)", (float("nan"),))[0]
        belady = row.get("libCacheSim Belady", (float("nan"),))[0]
        met_count += met
        total += 1
        out.append(target_row(trace, percent, ours, best, which, lru, [tiny, belady], met))
    out.append(f"\nTargets met at {met_count} of {total} points.\n")
    out.append("Low-water mark: object miss ratio of Stash adaptive / Stash s3-fifo when a write that "
               "exceeds the limit evicts down to this fraction of it.\n")
    out.append("| trace | cache | " + " | ".join(f"lwm {m}" for m in LOW_WATER_MARKS) + " |")
    out.append("|---|---:|" + "---:|" * len(LOW_WATER_MARKS))
    for (trace, percent) in sorted(cells):
        row = cells[(trace, percent)]
        values = []
        for mark in LOW_WATER_MARKS:
            a = row.get(f"Stash adaptive (lwm {mark})")
            b = row.get(f"Stash s3-fifo (lwm {mark})")
            values.append(f"{a[0]:.4f} / {b[0]:.4f}" if a and b else "–")
        out.append(f"| {short_name(trace)} | {size_label(percent)} | " + " | ".join(values) + " |")
    out.append("\nByte miss ratio at the same capacity (low-water mark 1.0).\n")
    wanted = [("Stash adaptive (lwm 1.0)", "Stash adaptive"), ("Stash tinylfu-bytes (lwm 1.0)", "Stash tinylfu-bytes")]
    wanted += [(f"libCacheSim {p}", p) for p in PRACTICAL + ["BeladySize"]]
    out.append("| trace | cache | " + " | ".join(label for _, label in wanted) + " |")
    out.append("|---|---:|" + "---:|" * len(wanted))
    for (trace, percent) in sorted(cells):
        row = cells[(trace, percent)]
        values = [f"{row[c][1]:.4f}" if c in row else "–" for c, _ in wanted]
        out.append(f"| {short_name(trace)} | {size_label(percent)} | " + " | ".join(values) + " |")
    return "\n".join(out)


def memory_summary(cells):
    """Object miss ratios of the memory tier's default (a MemoryCache, adaptive, cost = size)
    against the same targets as the disk default, with the disk default beside it."""
    out = ["| trace | cache | MemoryCache adaptive | best of libCacheSim (which) | Δ best (≤ 0.02) | "
           "libCacheSim LRU | Δ LRU (≤ 0.01) | MemoryCache lru | DiskCache adaptive | met |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    met_count = total = 0
    for trace, percent, row, ours, best, which, lru, met in checked_points(cells, "Stash memory adaptive"):
        memory_lru = row.get("Stash memory lru", (float("nan"),))[0]
        disk = row.get("Stash adaptive (lwm 1.0)", (float("nan"),))[0]
        met_count += met
        total += 1
        out.append(target_row(trace, percent, ours, best, which, lru, [memory_lru, disk], met))
    out.append(f"\nMemory tier: targets met at {met_count} of {total} points.")
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


def end_to_end(path):
    """Pairs of simulated and DiskCache replays of the same prefix (`replay --mode both`, which
    fails on any request whose outcome differs)."""
    rows = {}
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["trace"], r["cache_size"], r["low_water_mark"], r["policy"])
        rows.setdefault(key, {})[r["mode"]] = r
    out = ["| trace (prefix) | requests | cache | lwm | policy | object miss, simulated / DiskCache | "
           "byte miss, simulated / DiskCache | DiskCache seconds |",
           "|---|---:|---:|---:|---|---:|---:|---:|"]
    for (trace, size, lwm, policy), modes in sorted(rows.items()):
        sim, disk = modes.get("simulated"), modes.get("disk")
        if not sim or not disk:
            continue
        out.append(f"| {short_name(trace)} | {sim['requests']} | {size} | {lwm} | {policy} | "
                   f"{sim['object_miss_ratio']:.4f} / {disk['object_miss_ratio']:.4f} | "
                   f"{sim['byte_miss_ratio']:.4f} / {disk['byte_miss_ratio']:.4f} | {disk['seconds']:.0f} |")
    return "\n".join(out)


def main():
    if "--end-to-end" in sys.argv:
        print(end_to_end([a for a in sys.argv[1:] if not a.startswith("--")][0]))
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    cells = load(args[0], args[1])
    if "--bytes" in sys.argv:
        print(byte_summary(cells))
    elif "--memory" in sys.argv:
        print(memory_summary(cells))
    else:
        print(summary(cells) if "--summary" in sys.argv else per_trace(cells))


if __name__ == "__main__":
    main()
