#!/usr/bin/env python3
"""Generate a synthetic Zipf request trace as CSV: ``time,key,size``.

Each request names one of ``--objects`` objects drawn from a Zipf(alpha)
popularity distribution; an object's size is drawn once and stays the same on
every request for it (a cache entry does not change size between requests).

Example:
    gen_zipf.py --alpha 1.0 --size lognormal:median=30720,sigma=1.2 \
        -o Benchmarks/out/traces/zipf-1.0-lognormal.csv

Columns:
    time  integer request index starting at 1 (one request per tick); the
          replays only need it to be non-decreasing.
    key   object id, an integer in 1..objects. Ids are a random permutation of
          popularity ranks so that id order says nothing about popularity.
    size  object size in bytes.

Everything is vectorised with numpy: a 1M-request trace takes about a second.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

# Lines are formatted by one C-level "%" per chunk instead of np.savetxt, which
# formats row by row in Python and is ~5x slower for a million rows.
CHUNK_ROWS = 100_000


def parse_size_spec(spec: str) -> tuple[str, dict[str, float]]:
    """Parse ``fixed:32768`` or ``lognormal:median=30720,sigma=1.2``."""
    kind, _, rest = spec.partition(":")
    if kind == "fixed":
        try:
            size = int(rest)
        except ValueError:
            raise argparse.ArgumentTypeError(f"fixed size must be an integer: {spec!r}") from None
        if size <= 0:
            raise argparse.ArgumentTypeError(f"fixed size must be positive: {spec!r}")
        return kind, {"size": size}
    if kind == "lognormal":
        params = {"median": 30720.0, "sigma": 1.2}
        for item in filter(None, rest.split(",")):
            name, _, value = item.partition("=")
            if name not in params:
                raise argparse.ArgumentTypeError(f"unknown lognormal parameter {name!r} in {spec!r}")
            try:
                params[name] = float(value)
            except ValueError:
                raise argparse.ArgumentTypeError(f"lognormal {name} must be a number: {spec!r}") from None
        if params["median"] <= 0 or params["sigma"] < 0:
            raise argparse.ArgumentTypeError(f"need median > 0 and sigma >= 0: {spec!r}")
        return kind, params
    raise argparse.ArgumentTypeError(f"size must be fixed:N or lognormal:median=M,sigma=S, not {spec!r}")


def object_sizes(kind: str, params: dict[str, float], n_objects: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "fixed":
        return np.full(n_objects, int(params["size"]), dtype=np.int64)
    # ln(size) ~ Normal(ln(median), sigma), so `median` really is the median.
    sizes = rng.lognormal(mean=np.log(params["median"]), sigma=params["sigma"], size=n_objects)
    return np.maximum(1, np.rint(sizes)).astype(np.int64)


def zipf_ranks(alpha: float, n_objects: int, n_requests: int, rng: np.random.Generator) -> np.ndarray:
    """Popularity ranks 0..n_objects-1 with P(rank r) proportional to 1/(r+1)^alpha.

    Inverse-CDF sampling over the finite support; numpy's own rng.zipf needs
    alpha > 1 and has an unbounded support, so it does not fit here.
    """
    weights = np.arange(1, n_objects + 1, dtype=np.float64) ** -alpha
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    ranks = np.searchsorted(cdf, rng.random(n_requests), side="right")
    # Guard against the last cdf entry rounding to just under 1.0.
    return np.minimum(ranks, n_objects - 1)


def write_csv(path: str, times: np.ndarray, keys: np.ndarray, sizes: np.ndarray) -> None:
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    rows = np.column_stack([times, keys, sizes])
    with open(path, "w", encoding="ascii") as out:
        out.write("time,key,size\n")
        for start in range(0, len(rows), CHUNK_ROWS):
            chunk = rows[start : start + CHUNK_ROWS]
            out.write(("%d,%d,%d\n" * len(chunk)) % tuple(chunk.ravel().tolist()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alpha", type=float, default=1.0, help="Zipf skew (default 1.0; try 0.8 and 1.0)")
    parser.add_argument("--requests", type=int, default=1_000_000, help="number of requests (default 1000000)")
    parser.add_argument("--objects", type=int, default=100_000, help="number of distinct objects (default 100000)")
    parser.add_argument(
        "--size",
        type=str,
        default="fixed:32768",
        help="fixed:BYTES or lognormal:median=BYTES,sigma=S (default fixed:32768; lognormal sigma defaults to 1.2)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("-o", "--output", required=True, help="CSV path, e.g. Benchmarks/out/traces/zipf.csv")
    args = parser.parse_args(argv)

    if args.alpha < 0 or args.requests <= 0 or args.objects <= 0:
        parser.error("need alpha >= 0, requests > 0 and objects > 0")
    try:
        kind, params = parse_size_spec(args.size)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))

    rng = np.random.default_rng(args.seed)
    sizes_by_id = object_sizes(kind, params, args.objects, rng)
    # rank -> object id (1-based: some trace readers treat id 0 as "no object").
    id_of_rank = rng.permutation(args.objects) + 1
    keys = id_of_rank[zipf_ranks(args.alpha, args.objects, args.requests, rng)]
    sizes = sizes_by_id[keys - 1]
    times = np.arange(1, args.requests + 1, dtype=np.int64)
    write_csv(args.output, times, keys, sizes)

    # A summary on stderr so the chosen distribution can be checked at a glance.
    requested = np.unique(keys)
    wss = int(sizes_by_id[requested - 1].sum())
    pct = np.percentile(sizes_by_id, [50, 90, 99, 99.9]).astype(int)
    print(
        f"wrote {args.requests} requests to {args.output}: {len(requested)} of {args.objects} objects requested, "
        f"working set {wss} bytes; object sizes p50={pct[0]} p90={pct[1]} p99={pct[2]} p99.9={pct[3]} "
        f"mean={int(sizes_by_id.mean())} max={int(sizes_by_id.max())}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
