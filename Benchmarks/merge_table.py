#!/usr/bin/env python3
"""Merge benchmark JSON lines (Stash, diskcache, floor) into one markdown table.

Usage:
    merge_table.py RESULTS.jsonl... [-o comparison.md]
    some-bench --json | merge_table.py -

Reads every line that parses as a JSON object with "impl", "workload",
"value_size" and "median_ns_per_op"; anything else (build logs, progress) is
skipped. Rows are workload x value size; columns are Stash, diskcache (default
policy), diskcache LRU and the file-system floor, then the ratios
diskcache/Stash and Stash/floor. Missing results show "—".

Cells are "median (min–max)" over the runs: µs per operation, except the
open-* workloads, which are one operation each and shown in ms.
Uses only the standard library.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

COLUMNS = ["Stash", "diskcache", "diskcache LRU", "floor"]
WORKLOAD_ORDER = ["set", "get-hit", "get-miss", "set-full", "delete"]
DEFAULT_DISKCACHE_POLICY = "least-recently-stored"


def column_of(record: dict) -> str | None:
    impl = record["impl"]
    if impl == "stash":
        return "Stash"
    if impl == "floor":
        return "floor"
    if impl == "diskcache":
        policy = record.get("policy", DEFAULT_DISKCACHE_POLICY)
        if policy == DEFAULT_DISKCACHE_POLICY:
            return "diskcache"
        if policy == "least-recently-used":
            return "diskcache LRU"
    return None


def read_records(paths: list[str]) -> list[dict]:
    records = []
    for path in paths:
        handle = sys.stdin if path == "-" else open(path, encoding="utf-8")
        with handle:
            for line in handle:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and {"impl", "workload", "value_size", "median_ns_per_op"} <= record.keys():
                    records.append(record)
    return records


def is_open(workload: str) -> bool:
    return workload.startswith("open-")


def row_sort_key(row: tuple[str, int]) -> tuple:
    workload, size = row
    if workload in WORKLOAD_ORDER:
        rank = (0, WORKLOAD_ORDER.index(workload), "")
    elif is_open(workload):
        rank = (1, 0, workload)
    else:
        rank = (2, 0, workload)
    return (*rank, size)


def size_label(size: int) -> str:
    for unit, factor in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def number(value: float) -> str:
    """About three significant digits: 0.0123, 1.23, 12.3, 123, 1234."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def cell(record: dict | None, divisor: float) -> str:
    if record is None:
        return "—"
    median = number(record["median_ns_per_op"] / divisor)
    low = number(record["min_ns_per_op"] / divisor)
    high = number(record["max_ns_per_op"] / divisor)
    return f"{median} ({low}–{high})"


def ratio(numerator: dict | None, denominator: dict | None) -> str:
    if numerator is None or denominator is None or denominator["median_ns_per_op"] <= 0:
        return "—"
    return f"{numerator['median_ns_per_op'] / denominator['median_ns_per_op']:.2f}×"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine_header() -> list[str]:
    uname = os.uname()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"- Date: {now}",
        f"- Machine: {uname.sysname} {uname.release} {uname.machine}; {cpu_model()}; {os.cpu_count()} cores",
    ]


def render(records: list[dict]) -> str:
    table: dict[tuple[str, int], dict[str, dict]] = {}
    warnings = []
    for record in records:
        column = column_of(record)
        if column is None:
            warnings.append(f"ignored impl={record['impl']!r} policy={record.get('policy')!r}")
            continue
        row = table.setdefault((record["workload"], int(record["value_size"])), {})
        if column in row:
            warnings.append(f"duplicate {column} {record['workload']} {record['value_size']}: kept the first")
            continue
        row[column] = record

    runs = sorted({r["runs"] for r in records if "runs" in r})
    lines = ["# Stash benchmark comparison", "", *machine_header()]
    lines.append(
        "- Cells: median (min–max) over "
        + (f"{runs[0]}" if len(runs) == 1 else "/".join(map(str, runs)) if runs else "?")
        + " runs after a warm-up; µs per operation, ms for open-* (open to first hit). Lower is better."
    )
    lines.append("- Ratios compare medians: diskcache/Stash > 1 means Stash is faster; Stash/floor ≥ 1 is the overhead.")
    lines += [
        "",
        "| workload | size | " + " | ".join(COLUMNS) + " | diskcache/Stash | Stash/floor |",
        "| --- | ---: | " + " | ".join("---:" for _ in COLUMNS) + " | ---: | ---: |",
    ]
    notes = []
    for workload, size in sorted(table, key=row_sort_key):
        row = table[(workload, size)]
        divisor = 1e6 if is_open(workload) else 1e3
        cells = [cell(row.get(column), divisor) for column in COLUMNS]
        cells += [ratio(row.get("diskcache"), row.get("Stash")), ratio(row.get("Stash"), row.get("floor"))]
        lines.append(f"| {workload} | {size_label(size)} | " + " | ".join(cells) + " |")
        for column, record in row.items():
            if "evicted_per_op" in record:
                notes.append(
                    f"{column} {workload} {size_label(size)}: {record['evicted_per_op']} evictions per set"
                    + (f" (cull_limit={record['cull_limit']})" if "cull_limit" in record else "")
                )
    if notes:
        lines += ["", "Notes:", *(f"- {note}" for note in notes)]
    for warning in warnings:
        print(f"merge_table: {warning}", file=sys.stderr)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", help="JSON-lines files, or - for standard input")
    parser.add_argument("-o", "--output", help="also write the table to this file")
    args = parser.parse_args(argv)

    records = read_records(args.inputs)
    if not records:
        print("merge_table: no benchmark records found in the input", file=sys.stderr)
        return 1
    text = render(records)
    sys.stdout.write(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
