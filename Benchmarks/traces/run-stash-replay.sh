#!/usr/bin/env bash
# Replays the standard Zipf traces through every Stash eviction policy (the simulator, which
# runs DiskCache's own policy code) and puts the results beside libCacheSim's.
#
#   Benchmarks/traces/run-stash-replay.sh [TRACE_DIR]
#
# TRACE_DIR (default Benchmarks/out/traces) must hold the traces and replay.jsonl that
# run-traces.sh writes. Output: stash-replay.jsonl, policies.md (per-trace tables) and
# policies-summary.md in Benchmarks/out/traces/. Cache sizes 1 %, 5 % and 10 % of each
# trace's working set; low-water marks 1.0 (the same capacity as libCacheSim) and 0.9
# (Stash's default).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
traces="${1:-$root/Benchmarks/out/traces}"
out="$root/Benchmarks/out/traces"
scratch="${STASH_SCRATCH:-.build}"
mkdir -p "$out"

(cd "$root" && swift build -c release --scratch-path "$scratch" --product StashBenchmarks >&2)
bench="$root/$scratch/release/StashBenchmarks"

: > "$out/stash-replay.jsonl"
for alpha in 0.8 1.0; do
    for size in fixed lognormal; do
        trace="$traces/zipf-a${alpha}-${size}-1000000.csv"
        "$bench" replay "$trace" --cache-size 1%,5%,10% --policy all --low-water-mark 1.0,0.9 --json \
            >> "$out/stash-replay.jsonl"
    done
done
python3 "$root/Benchmarks/traces/policy_table.py" "$out/stash-replay.jsonl" "$traces/replay.jsonl" \
    > "$out/policies.md"
python3 "$root/Benchmarks/traces/policy_table.py" "$out/stash-replay.jsonl" "$traces/replay.jsonl" --summary \
    > "$out/policies-summary.md"
cat "$out/policies-summary.md"
echo "(per-trace tables in ${out#"$root/"}/policies.md)" >&2
