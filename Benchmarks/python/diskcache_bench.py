#!/usr/bin/env python3
"""Micro-benchmarks of python-diskcache (PyPI ``diskcache``), for comparison
with Stash's DiskCache and the file-system floor (Benchmarks/floor/fsfloor.c).

Prints one JSON object per (policy, workload, value size) on stdout; progress
goes to stderr. See Benchmarks/README.md for the workloads, the conventions
shared by every implementation (keys, value bytes, operation counts) and the
caveats.

Example:
    diskcache_bench.py --quick
    diskcache_bench.py --workloads get-hit,set --sizes 1024 --runs 9
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import shutil
import statistics
import sys
import tempfile
import time
from typing import Callable

import diskcache

# ---------------------------------------------------------------------------
# Conventions shared with fsfloor.c and the Swift StashBenchmarks executable.
# Change them in all three places (and in the README) or not at all.

KIB = 1024
MIB = 1024 * KIB
SIZES = [1 * KIB, 32 * KIB, 256 * KIB, 2 * MIB]
# Operations per run, by value size: large enough to swamp timer overhead,
# small enough that a run takes ~0.2-1 s. --quick divides by 10 (minimum 10).
OPS = {1 * KIB: 2000, 32 * KIB: 500, 256 * KIB: 200, 2 * MIB: 100}
# get-hit and get-miss are ~10x cheaper than writes: they make READ_PASSES
# passes over the same `ops` entries (ops reported = ops * READ_PASSES), which
# lengthens the timed loop without storing more data.
READ_PASSES = 5
OPEN_ENTRIES = 100_000  # open-100k: entries in the cache being opened (--quick: 10 000)
OPEN_VALUE_SIZE = 1 * KIB
# set-full: the cache holds min(ops, 64 MiB / size) entries, so a 2 MiB run
# does not need gigabytes of prefill.
FULL_CACHE_BYTES = 64 * MIB

SEED = 0x5354415348  # "STASH"
GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1


def key(i: int) -> str:
    """Key of the i-th present entry."""
    return f"key-{i:08d}"


def absent_key(i: int) -> str:
    """Key that is never stored (get-miss)."""
    return f"absent-{i:08d}"


@functools.lru_cache(maxsize=None)
def value_bytes(size: int) -> bytes:
    """The first `size` bytes of the splitmix64 stream seeded with SEED.

    Output k is splitmix64's mix of SEED + (k + 1) * GOLDEN, written little
    endian. Random bytes so that no layer can compress them; generated once,
    and every entry of a run stores the same bytes.
    """
    words = []
    state = SEED
    for _ in range((size + 7) // 8):
        state = (state + GOLDEN) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        words.append(z ^ (z >> 31))
    return b"".join(w.to_bytes(8, "little") for w in words)[:size]


# The first 16 bytes of the stream; the same test vector is in fsfloor.c and
# the README, so a port that gets splitmix64 wrong fails at start-up.
VALUE_TEST_VECTOR = "3d37c2c865c31ec43f6b6e42456663af"


# ---------------------------------------------------------------------------
# Workloads. Each takes (directory, value, ops, settings) and returns the
# nanoseconds spent in the timed part only, plus optional extra JSON fields
# ("timed_ops" when the timed loop did more than `ops` operations).
# Set-up (filling the cache, warming the page cache) is never timed.

# Larger than anything a run stores: "a cache with a large size_limit".
NO_LIMIT = 1 << 50


def open_cache(directory: str, settings: dict, **overrides) -> diskcache.Cache:
    return diskcache.Cache(directory, **{"size_limit": NO_LIMIT, **settings, **overrides})


def fill(cache: diskcache.Cache, value: bytes, count: int, start: int = 0) -> None:
    # One transaction: set-up speed only, it is not measured.
    with cache.transact():
        for i in range(start, start + count):
            cache.set(key(i), value)


def check(condition: bool, message: str) -> None:
    """A benchmark that measured the wrong thing must fail loudly, not print a number."""
    if not condition:
        raise SystemExit(f"diskcache_bench: sanity check failed: {message}")


def run_set(directory: str, value: bytes, ops: int, settings: dict) -> tuple[int, dict]:
    with open_cache(directory, settings) as cache:
        keys = [key(i) for i in range(ops)]
        start = time.perf_counter_ns()
        for k in keys:
            cache.set(k, value)
        elapsed = time.perf_counter_ns() - start
        check(len(cache) == ops, f"set stored {len(cache)} of {ops} entries")
    return elapsed, {}


def run_get_hit(directory: str, value: bytes, ops: int, settings: dict) -> tuple[int, dict]:
    with open_cache(directory, settings) as cache:
        fill(cache, value, ops)
        keys = [key(i) for i in range(ops)]
        for k in keys:  # warm the page cache and SQLite's page cache
            cache.get(k)
        total = 0
        start = time.perf_counter_ns()
        for _ in range(READ_PASSES):
            for k in keys:
                total += len(cache.get(k))
        elapsed = time.perf_counter_ns() - start
        check(total == READ_PASSES * ops * len(value), "get-hit returned wrong lengths")
    return elapsed, {"timed_ops": READ_PASSES * ops}


def run_get_miss(directory: str, value: bytes, ops: int, settings: dict) -> tuple[int, dict]:
    with open_cache(directory, settings) as cache:
        fill(cache, value, ops)  # misses against a populated index, not an empty one
        keys = [absent_key(i) for i in range(ops)]
        misses = 0
        start = time.perf_counter_ns()
        for _ in range(READ_PASSES):
            for k in keys:
                if cache.get(k) is None:
                    misses += 1
        elapsed = time.perf_counter_ns() - start
        check(misses == READ_PASSES * ops, f"get-miss hit {READ_PASSES * ops - misses} times")
    return elapsed, {"timed_ops": READ_PASSES * ops}


def run_set_full(directory: str, value: bytes, ops: int, settings: dict) -> tuple[int, dict]:
    capacity = max(1, min(ops, FULL_CACHE_BYTES // len(value)))
    # diskcache culls after the insert, in the same transaction, and only while
    # volume() >= size_limit, removing at most cull_limit entries per set. With
    # the default cull_limit=10 one set in ~10 evicts 10 entries; cull_limit=1
    # makes every set of an equal-sized value at the limit evict exactly one,
    # which is the steady state this workload is meant to measure.
    # volume() also counts SQLite pages, so the limit is reached a little
    # before `capacity` values are stored; the prefill overshoots to be sure.
    cull_limit = settings.get("cull_limit", 1)
    limit = capacity * len(value)
    with open_cache(directory, {**settings, "cull_limit": cull_limit}, size_limit=limit) as cache:
        prefill = capacity + capacity // 10 + 2
        for i in range(prefill):  # not fill(): culling must run as it would in use
            cache.set(key(i), value)
        before = len(cache)
        keys = [key(prefill + i) for i in range(ops)]
        start = time.perf_counter_ns()
        for k in keys:
            cache.set(k, value)
        elapsed = time.perf_counter_ns() - start
        evicted = before + ops - len(cache)
        check(before < prefill, "prefill never reached the size limit")
    return elapsed, {"cull_limit": cull_limit, "evicted_per_op": round(evicted / ops, 3)}


def run_delete(directory: str, value: bytes, ops: int, settings: dict) -> tuple[int, dict]:
    with open_cache(directory, settings) as cache:
        fill(cache, value, ops)
        keys = [key(i) for i in range(ops)]
        deleted = 0
        start = time.perf_counter_ns()
        for k in keys:
            deleted += cache.delete(k)
        elapsed = time.perf_counter_ns() - start
        check(deleted == ops and len(cache) == 0, f"delete removed {deleted} of {ops}")
    return elapsed, {}


class OpenWorkload:
    """open-100k: from constructing the cache on an existing directory of
    `entries` small entries to the first successful get.

    Filling 100 000 entries takes seconds, so one directory is filled per
    policy and reopened by every run (an open does not change the data);
    the page cache is warm, as it is when an app relaunches.
    """

    def __init__(self, entries: int) -> None:
        self.entries = entries
        self.name = f"open-{entries // 1000}k"
        self.directories: dict[str, str] = {}

    def prepare(self, base: str, settings: dict) -> str:
        policy = settings["eviction_policy"]
        if policy not in self.directories:
            directory = tempfile.mkdtemp(prefix="diskcache-open-", dir=base)
            with open_cache(directory, settings) as cache:
                fill(cache, value_bytes(OPEN_VALUE_SIZE), self.entries)
            self.directories[policy] = directory
        return self.directories[policy]

    def run(self, directory: str, settings: dict) -> tuple[int, dict]:
        probe = key(self.entries // 2)
        start = time.perf_counter_ns()
        cache = open_cache(directory, settings)
        hit = cache.get(probe)
        elapsed = time.perf_counter_ns() - start
        cache.close()
        check(hit is not None and len(hit) == OPEN_VALUE_SIZE, "open-100k: probe key missing")
        return elapsed, {"entries": self.entries}

    def cleanup(self) -> None:
        for directory in self.directories.values():
            shutil.rmtree(directory, ignore_errors=True)
        self.directories.clear()


PER_SIZE: dict[str, Callable[[str, bytes, int, dict], tuple[int, dict]]] = {
    "set": run_set,
    "get-hit": run_get_hit,
    "get-miss": run_get_miss,
    "set-full": run_set_full,
    "delete": run_delete,
}
ALL_WORKLOADS = [*PER_SIZE, "open-100k"]
POLICY_NAMES = {"lrs": "least-recently-stored", "lru": "least-recently-used"}


# ---------------------------------------------------------------------------


def summarize(impl_fields: dict, samples_ns: list[int], ops: int, extra: dict) -> dict:
    ops = extra.pop("timed_ops", ops)
    per_op = sorted(s / ops for s in samples_ns)
    return {
        **impl_fields,
        "ops": ops,
        "median_ns_per_op": round(statistics.median(per_op)),
        "min_ns_per_op": round(per_op[0]),
        "max_ns_per_op": round(per_op[-1]),
        "runs": len(per_op),
        **extra,
    }


def measure(run_once: Callable[[], tuple[int, dict]], runs: int, warmups: int) -> tuple[list[int], dict]:
    samples, extra = [], {}
    for i in range(warmups + runs):
        # A collection in the middle of a timed loop is noise, not diskcache.
        gc.collect()
        gc.disable()
        try:
            elapsed, extra = run_once()
        finally:
            gc.enable()
        if i >= warmups:
            samples.append(elapsed)
    return samples, extra


def in_temp_dir(base: str, body: Callable[[str], tuple[int, dict]]) -> Callable[[], tuple[int, dict]]:
    """A fresh directory per run, removed afterwards (untimed)."""

    def run_once() -> tuple[int, dict]:
        directory = tempfile.mkdtemp(prefix="diskcache-bench-", dir=base)
        try:
            return body(directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    return run_once


def comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_workloads(text: str) -> list[str]:
    names = ALL_WORKLOADS if text == "all" else comma_list(text)
    unknown = [n for n in names if n not in ALL_WORKLOADS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown workloads {unknown}; known: {', '.join(ALL_WORKLOADS)}, all")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="ops / 10, 3 runs, 10k entries for open: a smoke test")
    parser.add_argument("--runs", type=int, help="timed runs per workload (default 5; 3 with --quick)")
    parser.add_argument("--warmups", type=int, default=1, help="untimed runs first (default 1)")
    parser.add_argument("--workloads", type=parse_workloads, default=ALL_WORKLOADS, help="comma list or 'all'")
    parser.add_argument(
        "--lru-workloads",
        type=parse_workloads,
        default=["get-hit"],
        help="workloads repeated with eviction_policy=least-recently-used (default get-hit; '' for none)",
    )
    parser.add_argument(
        "--sizes", type=lambda t: [int(x) for x in comma_list(t)], default=SIZES, help="value sizes in bytes"
    )
    parser.add_argument(
        "--cull-limit", type=int, default=1, help="diskcache cull_limit for set-full (default 1; diskcache's own is 10)"
    )
    parser.add_argument("--dir", default=None, help="parent of the per-run temporary directories (default $TMPDIR)")
    args = parser.parse_args(argv)

    check(value_bytes(16).hex() == VALUE_TEST_VECTOR, "value bytes differ from the shared test vector")
    runs = args.runs or (3 if args.quick else 5)
    if runs < 1 or args.warmups < 0:
        parser.error("need --runs >= 1 and --warmups >= 0")
    scale = 10 if args.quick else 1
    opener = OpenWorkload(OPEN_ENTRIES // scale)
    base = tempfile.mkdtemp(prefix="diskcache-bench-", dir=args.dir)

    plan = [("lrs", w) for w in args.workloads] + [("lru", w) for w in args.lru_workloads]
    try:
        for policy_key, workload in plan:
            policy = POLICY_NAMES[policy_key]
            settings = {"eviction_policy": policy}
            if workload == "set-full":
                settings["cull_limit"] = args.cull_limit
            fields = {"impl": "diskcache", "policy": policy}
            if workload == "open-100k":
                print(f"diskcache {policy} {opener.name}: filling", file=sys.stderr, flush=True)
                directory = opener.prepare(base, settings)
                samples, extra = measure(lambda: opener.run(directory, settings), runs, args.warmups)
                row = {**fields, "workload": opener.name, "value_size": OPEN_VALUE_SIZE}
                print(json.dumps(summarize(row, samples, 1, extra)), flush=True)
                continue
            for size in args.sizes:
                value = value_bytes(size)
                ops = max(10, OPS.get(size, 1000) // scale)
                print(f"diskcache {policy} {workload} {size} B x {ops}", file=sys.stderr, flush=True)
                body = PER_SIZE[workload]
                samples, extra = measure(
                    in_temp_dir(base, lambda d: body(d, value, ops, settings)), runs, args.warmups
                )
                row = {**fields, "workload": workload, "value_size": size}
                print(json.dumps(summarize(row, samples, ops, extra)), flush=True)
    finally:
        opener.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
