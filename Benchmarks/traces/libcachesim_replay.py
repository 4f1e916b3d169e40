#!/usr/bin/env python3
"""Replay CSV traces (``time,key,size``, as written by gen_zipf.py) through
libCacheSim's eviction policies and report object and byte miss ratios.

Example:
    libcachesim_replay.py Benchmarks/out/traces/zipf-1.0-lognormal.csv

Output: one JSON object per (trace, cache size, policy) on stdout, then a
markdown table per trace (``--markdown PATH`` writes the tables to a file
instead). libCacheSim's own C logging goes to stderr.

Cache sizes are fractions of the trace's working set in bytes (the sum of the
sizes of the distinct objects requested), computed by libCacheSim.

Facts about the PyPI ``libcachesim`` package (0.3.5) this script relies on:
  * Policies are classes: LRU, S3FIFO, Sieve, WTinyLFU, Belady, BeladySize, ...
    constructed as ``Policy(cache_size_bytes)``; ``cache.process_trace(reader)``
    resets the reader, replays it and returns
    ``(object_miss_ratio, byte_miss_ratio)``.
  * Belady and BeladySize need each request's next access time, which only
    the oracleGeneral binary format carries. On a CSV reader Belady silently
    returns LRU-like (wrong) numbers and BeladySize spins forever printing
    warnings. So the CSV is converted once with
    ``libcachesim_python.convert_to_oracleGeneral`` (the ``Util`` wrapper of it
    passes the wrong object and raises TypeError, hence the raw reader below),
    and every policy replays the converted file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

try:
    import libcachesim as lcs
    from libcachesim import ReaderInitParam, TraceReader, TraceType
    from libcachesim.libcachesim_python import convert_to_oracleGeneral
except ImportError as error:  # pragma: no cover - depends on the environment
    sys.exit(f"libcachesim is not importable ({error}); install it with: Benchmarks/.venv/bin/pip install libcachesim")

# Display name -> libCacheSim class name. Belady is the offline optimum for
# equal-sized objects (evict the object re-requested furthest in the future);
# BeladySize is libCacheSim's sampled size-aware variant, the better lower
# bound when sizes vary. Neither is byte-optimal: that problem is NP-hard.
POLICIES = {
    "LRU": "LRU",
    "FIFO": "FIFO",
    "S3-FIFO": "S3FIFO",
    "SIEVE": "Sieve",
    "W-TinyLFU": "WTinyLFU",
    "ARC": "ARC",
    "Belady": "Belady",
    "BeladySize": "BeladySize",
}
# libcachesim.WTinyLFU's default window_size, as a fraction of the cache bytes.
WTINYLFU_WINDOW = 0.01
DEFAULT_POLICIES = ["LRU", "FIFO", "S3-FIFO", "SIEVE", "ARC", "W-TinyLFU", "Belady", "BeladySize"]
DEFAULT_FRACTIONS = [0.01, 0.05, 0.10]


def csv_reader(path: str) -> TraceReader:
    params = ReaderInitParam(has_header=True, delimiter=",")
    # libCacheSim's CSV field numbers are 1-based.
    params.time_field = 1
    params.obj_id_field = 2
    params.obj_size_field = 3
    return TraceReader(path, TraceType.CSV_TRACE, params)


def oracle_reader(csv_path: str) -> TraceReader:
    """Convert ``csv_path`` to oracleGeneral (once; reused while newer than the CSV)."""
    oracle_path = os.path.splitext(csv_path)[0] + ".oracleGeneral"
    if not os.path.exists(oracle_path) or os.path.getmtime(oracle_path) < os.path.getmtime(csv_path):
        convert_to_oracleGeneral(csv_reader(csv_path)._reader, oracle_path)
    return TraceReader(oracle_path, TraceType.ORACLE_GENERAL_TRACE)


def request_sizes(csv_path: str) -> np.ndarray:
    """The size column, one entry per request (numpy's C parser: ~0.1 s per 1M rows)."""
    return np.loadtxt(csv_path, delimiter=",", skiprows=1, usecols=2, dtype=np.int64, ndmin=1)


def replay(csv_path: str, policies: list[str], fractions: list[float]) -> list[dict]:
    reader = oracle_reader(csv_path)
    n_objects, wss_bytes = reader.get_working_set_size()
    n_requests = reader.get_num_of_req()
    sizes = request_sizes(csv_path)
    results = []
    for fraction in fractions:
        cache_bytes = max(1, int(fraction * wss_bytes))
        for policy in policies:
            cache = getattr(lcs, POLICIES[policy])(cache_bytes)
            started = time.perf_counter()
            object_miss, byte_miss = cache.process_trace(reader)
            result = {
                "trace": os.path.basename(csv_path),
                "policy": policy,
                "libcachesim_name": cache.cache_name,
                "cache_fraction": fraction,
                "cache_bytes": cache_bytes,
                "requests": n_requests,
                "objects": n_objects,
                "working_set_bytes": wss_bytes,
                "object_miss_ratio": round(object_miss, 6),
                "byte_miss_ratio": round(byte_miss, 6),
                "seconds": round(time.perf_counter() - started, 3),
            }
            # libCacheSim's W-TinyLFU admits through an LRU window of
            # window_size (default 1 %) of the cache: an object larger than the
            # window is never cached, which inflates its miss ratios on small
            # caches or heavy-tailed sizes. Flag it instead of hiding it.
            window_bytes = int(cache_bytes * WTINYLFU_WINDOW)
            too_big = sizes > window_bytes
            if policy == "W-TinyLFU" and too_big.any():
                result["note"] = (
                    f"objects over its {window_bytes} B window are never admitted: "
                    f"{too_big.mean():.1%} of requests, {sizes[too_big].sum() / sizes.sum():.1%} of bytes"
                )
            print(json.dumps(result), flush=True)
            results.append(result)
    return results


def markdown_table(results: list[dict]) -> str:
    """One row per policy; per cache size an object and a byte miss ratio column."""
    first = results[0]
    fractions = sorted({r["cache_fraction"] for r in results})
    policies = list(dict.fromkeys(r["policy"] for r in results))
    by_key = {(r["policy"], r["cache_fraction"]): r for r in results}
    lines = [
        f"Trace `{first['trace']}`: {first['requests']} requests, {first['objects']} objects, "
        f"working set {first['working_set_bytes'] / 2**20:.1f} MiB. Miss ratios (lower is better), "
        "object / byte.",
        "",
        "| policy | " + " | ".join(f"{f:.0%} obj | {f:.0%} byte" for f in fractions) + " |",
        "| --- | " + " | ".join("---: | ---:" for _ in fractions) + " |",
    ]
    notes = []
    for policy in policies:
        cells = []
        for fraction in fractions:
            r = by_key.get((policy, fraction))
            cells += [f"{r['object_miss_ratio']:.4f}", f"{r['byte_miss_ratio']:.4f}"] if r else ["—", "—"]
            if r and "note" in r:
                cells[-1] += "*"
                notes.append(f"\\* {policy} at {fraction:.0%}: {r['note']}.")
        lines.append(f"| {policy} | " + " | ".join(cells) + " |")
    if notes:
        lines += [""] + [note + "  " for note in notes]
    return "\n".join(lines) + "\n"


def comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="+", help="CSV trace files (time,key,size with a header line)")
    parser.add_argument(
        "--policies",
        type=comma_list,
        default=DEFAULT_POLICIES,
        help=f"comma-separated, from {', '.join(POLICIES)} (default: {','.join(DEFAULT_POLICIES)})",
    )
    parser.add_argument(
        "--fractions",
        type=lambda text: [float(x) for x in comma_list(text)],
        default=DEFAULT_FRACTIONS,
        help="cache sizes as fractions of the working set bytes (default: 0.01,0.05,0.1)",
    )
    parser.add_argument("--markdown", help="write the markdown tables to this file instead of stdout")
    args = parser.parse_args(argv)

    unknown = [p for p in args.policies if p not in POLICIES]
    if unknown:
        parser.error(f"unknown policies {unknown}; known: {', '.join(POLICIES)}")
    missing = [p for p in args.policies if not hasattr(lcs, POLICIES[p])]
    if missing:
        # Say so rather than silently dropping a column.
        print(f"libcachesim {getattr(lcs, '__version__', '?')} lacks {missing}; skipping them", file=sys.stderr)
        args.policies = [p for p in args.policies if p not in missing]
    if any(not 0 < f <= 1 for f in args.fractions):
        parser.error("fractions must be in (0, 1]")

    tables = [markdown_table(replay(path, args.policies, args.fractions)) for path in args.traces]
    text = "\n".join(tables)
    if args.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
        with open(args.markdown, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        print()
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
