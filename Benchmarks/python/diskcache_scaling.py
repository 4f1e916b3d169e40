#!/usr/bin/env python3
"""Cost per operation against the number of entries, for python-diskcache: the
counterpart of `StashBenchmarks scaling` (Sources/StashBenchmarks/ScalingWorkloads.swift).

One round at one cache size: fill N entries of 1 KiB, then time open (to the
first get), get-hit, get-miss, set, delete and set into a full cache. Prints
one JSON line per workload. Benchmarks/run-scaling.sh interleaves rounds of
both implementations.

    diskcache_scaling.py --entries 100000 [--round R] [--dir PARENT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

import diskcache

from diskcache_bench import absent_key, key, value_bytes

VALUE_SIZE = 1024
READS = 20_000
WRITES = 5_000
NO_LIMIT = 1 << 50


def hit_key(i: int, n: int) -> str:
    """The same pseudo-random walk over all n keys as ScalingWorkloads.hitKey."""
    return key((i * 7919 + 13) % n)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, required=True)
    parser.add_argument("--round", type=int, default=0)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--template", default=None,
                        help="a filled cache to copy for each round (made on first use), so that a large N is filled once")
    args = parser.parse_args()
    n = args.entries
    value = value_bytes(VALUE_SIZE)

    def line(workload: str, amount: float, unit: str = "ns_per_op") -> None:
        print(json.dumps({"impl": "diskcache", "workload": workload, "entries": n, "value_size": VALUE_SIZE,
                          "round": args.round, unit: round(amount)}), flush=True)

    directory = tempfile.mkdtemp(prefix="diskcache-scaling-", dir=args.dir)
    try:
        template = args.template
        if template is None or not os.path.isdir(template):
            target = template or directory
            with diskcache.Cache(target, size_limit=NO_LIMIT) as cache:
                for first in range(0, n, 1000):  # set-up, not timed: transactions of 1000
                    with cache.transact():
                        for i in range(first, min(n, first + 1000)):
                            cache.set(key(i), value)
        if template is not None:
            shutil.rmtree(directory)
            shutil.copytree(template, directory)
        # Set-up writes reach the disk before the clock starts (as on Stash's side): otherwise
        # the first sync of a timed write flushes the whole freshly copied database.
        os.sync()
        index = sum(os.path.getsize(os.path.join(directory, name)) for name in os.listdir(directory)
                    if name.startswith("cache.db"))
        line("index-bytes-per-entry", (index - n * VALUE_SIZE) / n, unit="bytes")

        start = time.perf_counter_ns()
        cache = diskcache.Cache(directory, size_limit=NO_LIMIT)
        assert len(cache.get(key(n // 2))) == VALUE_SIZE
        line("open", time.perf_counter_ns() - start)

        for i in range(min(n, READS)):
            cache.get(hit_key(i, n))
        keys = [hit_key(i, n) for i in range(READS)]
        start = time.perf_counter_ns()
        for k in keys:
            if len(cache.get(k)) != VALUE_SIZE:
                raise SystemExit("get-hit missed")
        line("get-hit", (time.perf_counter_ns() - start) / READS)

        keys = [absent_key(i) for i in range(READS)]
        start = time.perf_counter_ns()
        for k in keys:
            if cache.get(k) is not None:
                raise SystemExit("get-miss hit")
        line("get-miss", (time.perf_counter_ns() - start) / READS)

        keys = [key(n + i) for i in range(WRITES)]
        start = time.perf_counter_ns()
        for k in keys:
            cache.set(k, value)
        line("set", (time.perf_counter_ns() - start) / WRITES)

        start = time.perf_counter_ns()
        for k in keys:
            cache.delete(k)
        line("delete", (time.perf_counter_ns() - start) / WRITES)
        cache.close()

        # A full cache with diskcache's defaults (cull_limit 10): its limit is the volume now.
        cache = diskcache.Cache(directory, size_limit=NO_LIMIT)
        limit = cache.volume()
        cache.close()
        cache = diskcache.Cache(directory, size_limit=limit)
        keys = [key(2 * n + i) for i in range(WRITES)]
        start = time.perf_counter_ns()
        for k in keys:
            cache.set(k, value)
        line("set-full", (time.perf_counter_ns() - start) / WRITES)
        cache.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
