#!/usr/bin/env python3
"""Generate the non-Zipf request traces as CSV (``time,key,size``), like gen_zipf.py.

    gen_workloads.py photo-feed  -o feed.csv  [--requests N] [--seed S]
    gen_workloads.py photo-app   -o app.csv   [--requests N] [--seed S]
    gen_workloads.py loop        -o loop.csv  [--requests N] [--seed S]
    gen_workloads.py shift       -o shift.csv [--requests N] [--seed S] [--alpha A]

photo-feed  A photo app's traffic, recency-heavy. Photos are posted continually. A user
            session scrolls the feed newest-first through thumbnails (2-64 KiB, lognormal),
            to a geometric depth, so that new posts are requested by many sessions while
            they are recent and then fade. Now and then a viewed photo's large variant
            (256 KiB-8 MiB) is opened. Favourites (a Zipf 0.9 set of photos) are
            revisited, thumbnail and large variant, with heavy-tailed popularity. Profile
            scans walk through a run of old thumbnails that are never requested again
            (one-hit wonders). Sizes 2 KiB-8 MiB.
photo-app   The same ingredients with far more reuse, calibrated to resemble the photo-app
            trace of issue 13 (not ours to see): ~116 000 objects per 1 000 000 requests,
            2 KiB-8 MiB, and with libCacheSim at 1 / 5 / 10 % of the working set roughly
            S3-FIFO 0.44 / 0.24 / 0.15, W-TinyLFU 0.78 / 0.34 / 0.23, Belady 0.29 / 0.14 / 0.12.
            50 000 photos exist when the trace starts; about 0.9 new posts arrive per
            session. 38 % of sessions scroll the feed newest-first through thumbnails
            (2-64 KiB) to a heavy-tailed depth (lognormal: median 16 posts, mean ~35) and
            open a large variant (256 KiB-8 MiB) now and then (0.07 % of views); 59 %
            revisit 1-30 favourites, Zipf 0.55 over 22 000 of the older photos (opened large
            0.4 % of the time); 3 % are profile scans of 10-76 thumbnails never requested
            again. Calibrated by hand in a dozen tries (Benchmarks/POLICIES.md, "The
            photo-app trace"): seed 1 gives 117 432 objects, a 5.95 GB working set, S3-FIFO
            0.41 / 0.26 / 0.16, W-TinyLFU 0.61 / 0.36 / 0.23, Belady 0.29 / 0.15 / 0.12.
loop        A loop over a set of objects whose bytes are 5.5 % of the working set (so just
            larger than a 5 % cache, far larger than 1 %, and inside 10 %), 80 % of the
            requests, interleaved with requests for a large, rarely repeated cold set.
shift       Zipf(alpha) popularity over 100 000 objects whose ranking is reshuffled halfway
            through the trace: the popular objects of the first half become ordinary.

Sizes of one object never change between requests. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable

import numpy as np

from gen_zipf import object_sizes, write_csv, zipf_ranks

KIB = 1024
MIB = 1024 * KIB


def clamp_lognormal(rng: np.random.Generator, median: float, sigma: float, low: int, high: int, n: int) -> np.ndarray:
    sizes = rng.lognormal(mean=np.log(median), sigma=sigma, size=n)
    return np.clip(np.rint(sizes), low, high).astype(np.int64)


def scroll_feed(request: Callable[[int, bool], None], py: random.Random, posted: int, depth: int, opens: float) -> None:
    """Requests the thumbnails of the `depth` newest of `posted` photos, newest first, opening
    each one's large variant with probability `opens`."""
    for offset in range(depth):
        photo = posted - 1 - offset
        request(photo, False)
        if py.random() < opens:
            request(photo, True)


def append_scan(keys: list[int], sizes: list[int], first: int, count: int, thumb_size: np.ndarray) -> int:
    """Appends a profile scan of `count` thumbnails from key `first` on; returns the next key."""
    for key in range(first, first + count):
        keys.append(key)
        sizes.append(int(thumb_size[key % len(thumb_size)]))
    return first + count


def photo_feed(n_requests: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and sizes of the photo-feed trace (see the module docstring)."""
    rng = np.random.default_rng(seed)
    py = random.Random(seed)
    max_photos = n_requests  # an upper bound on posts; ids are assigned lazily
    thumb_size = clamp_lognormal(rng, 16 * KIB, 0.8, 2 * KIB, 64 * KIB, max_photos)
    large_size = clamp_lognormal(rng, 1.5 * MIB, 0.7, 256 * KIB, 8 * MIB, max_photos)
    # Key space: thumbnail of photo p is 2p+1, its large variant 2p+2; scan thumbnails get
    # their own ids above every photo.
    keys: list[int] = []
    sizes: list[int] = []
    posted = 2000  # photos already in the feed when the trace starts
    favourites = 20_000
    # Favourite rank -> a photo anywhere in the feed's history so far.
    favourite_ids = rng.integers(0, 1 << 40, size=favourites)
    fav_cdf = np.cumsum(np.arange(1, favourites + 1, dtype=np.float64) ** -0.9)
    fav_cdf /= fav_cdf[-1]
    scan_next = 2 * max_photos + 10

    def request(photo: int, large: bool) -> None:
        keys.append(2 * photo + (2 if large else 1))
        sizes.append(int(large_size[photo] if large else thumb_size[photo]))

    while len(keys) < n_requests:
        posted += py.randint(0, 20)  # new posts since the previous session
        activity = py.random()
        if activity < 0.70:
            # A feed session: newest first, to a geometric depth (mean 60 posts).
            depth = min(posted, 1 + int(rng.geometric(1 / 60)))
            scroll_feed(request, py, posted, depth, opens=0.04)
        elif activity < 0.95:
            # Favourites: a few heavy-tailed picks among older photos.
            for _ in range(py.randint(1, 6)):
                rank = int(np.searchsorted(fav_cdf, py.random(), side="right"))
                photo = int(favourite_ids[min(rank, favourites - 1)] % posted)
                request(photo, large=False)
                if py.random() < 0.3:
                    request(photo, large=True)
        else:
            # A profile scan: a run of old thumbnails nobody requests again.
            scan_next = append_scan(keys, sizes, scan_next, py.randint(20, 300), thumb_size)
    return np.array(keys[:n_requests], dtype=np.int64), np.array(sizes[:n_requests], dtype=np.int64)


def photo_app(n_requests: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and sizes of the photo-app trace (see the module docstring)."""
    rng = np.random.default_rng(seed)
    py = random.Random(seed)
    archive = 50_000  # photos posted before the trace starts; favourites are among them
    max_photos = archive + n_requests  # an upper bound on photos; ids are used lazily
    thumb_size = clamp_lognormal(rng, 16 * KIB, 0.8, 2 * KIB, 64 * KIB, max_photos)
    large_size = clamp_lognormal(rng, 1.5 * MIB, 0.7, 256 * KIB, 8 * MIB, max_photos)
    favourites = 22_000
    favourite_photo = rng.permutation(archive)[:favourites]  # popularity rank -> photo
    favourite_cdf = np.cumsum(np.arange(1, favourites + 1, dtype=np.float64) ** -0.55)
    favourite_cdf /= favourite_cdf[-1]
    # Thumbnail of photo p is 2p+1, its large variant 2p+2; scanned thumbnails come after.
    keys: list[int] = []
    sizes: list[int] = []
    posted = archive
    scan_next = 2 * max_photos + 10

    def request(photo: int, large: bool) -> None:
        keys.append(2 * photo + (2 if large else 1))
        sizes.append(int(large_size[photo] if large else thumb_size[photo]))

    while len(keys) < n_requests:
        posted += int(rng.poisson(0.9))  # new posts since the previous session
        activity = py.random()
        if activity < 0.38:
            # The feed, newest first, to a heavy-tailed depth (median 16 posts, mean ~35).
            depth = min(posted, 1 + int(rng.lognormal(np.log(15), 1.3)))
            scroll_feed(request, py, posted, depth, opens=0.0007)
        elif activity < 0.97:
            # Favourites: 1-30 picks, Zipf 0.55 over 22 000 archived photos; rarely opened large.
            for _ in range(py.randint(1, 30)):
                rank = min(int(np.searchsorted(favourite_cdf, py.random(), side="right")), favourites - 1)
                photo = int(favourite_photo[rank])
                request(photo, large=False)
                if py.random() < 0.004:
                    request(photo, large=True)
        else:
            # A profile scan: a run of thumbnails nobody requests again.
            scan_next = append_scan(keys, sizes, scan_next, py.randint(10, 76), thumb_size)
    return np.array(keys[:n_requests], dtype=np.int64), np.array(sizes[:n_requests], dtype=np.int64)


def loop(n_requests: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys and sizes of the loop trace (see the module docstring)."""
    rng = np.random.default_rng(seed)
    loop_share = 0.8
    cold_objects = 150_000
    cold_sizes = object_sizes("lognormal", {"median": 30720, "sigma": 1.2}, cold_objects, rng)
    cold_requests = int(n_requests * (1 - loop_share))
    cold_keys = rng.integers(0, cold_objects, size=cold_requests)
    working_set_guess = int(cold_sizes[np.unique(cold_keys)].sum())
    # Loop objects until their bytes are 5.5 % of the whole working set (cold + loop).
    loop_sizes_all = object_sizes("lognormal", {"median": 30720, "sigma": 1.2}, 100_000, rng)
    loop_bytes = np.cumsum(loop_sizes_all)
    target = 0.055 / 0.945 * working_set_guess
    loop_objects = int(np.searchsorted(loop_bytes, target)) + 1
    loop_sizes = loop_sizes_all[:loop_objects]
    is_cold = np.zeros(n_requests, dtype=bool)
    is_cold[rng.choice(n_requests, size=cold_requests, replace=False)] = True
    keys = np.empty(n_requests, dtype=np.int64)
    sizes = np.empty(n_requests, dtype=np.int64)
    loop_positions = np.arange(n_requests - cold_requests) % loop_objects
    keys[~is_cold] = loop_positions + 1
    sizes[~is_cold] = loop_sizes[loop_positions]
    keys[is_cold] = cold_keys + loop_objects + 1
    sizes[is_cold] = cold_sizes[cold_keys]
    return keys, sizes


def shift(n_requests: int, seed: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Keys and sizes of the popularity-shift trace (see the module docstring)."""
    rng = np.random.default_rng(seed)
    n_objects = 100_000
    sizes_by_id = object_sizes("lognormal", {"median": 30720, "sigma": 1.2}, n_objects, rng)
    ranks = zipf_ranks(alpha, n_objects, n_requests, rng)
    half = n_requests // 2
    first = rng.permutation(n_objects)
    second = rng.permutation(n_objects)
    keys = np.concatenate([first[ranks[:half]], second[ranks[half:]]]) + 1
    return keys, sizes_by_id[keys - 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["photo-feed", "photo-app", "loop", "shift"])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--alpha", type=float, default=1.0, help="shift only: Zipf skew (default 1.0)")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    if args.requests <= 0:
        parser.error("need requests > 0")
    if args.kind == "photo-feed":
        keys, sizes = photo_feed(args.requests, args.seed)
    elif args.kind == "photo-app":
        keys, sizes = photo_app(args.requests, args.seed)
    elif args.kind == "loop":
        keys, sizes = loop(args.requests, args.seed)
    else:
        keys, sizes = shift(args.requests, args.seed, args.alpha)
    write_csv(args.output, np.arange(1, len(keys) + 1, dtype=np.int64), keys, sizes)
    distinct, first = np.unique(keys, return_index=True)
    print(
        f"wrote {len(keys)} requests to {args.output}: {len(distinct)} objects, "
        f"working set {int(sizes[first].sum())} bytes, sizes {int(sizes.min())}-{int(sizes.max())}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
