#!/usr/bin/env bash
# Generates the standard traces, replays them through libCacheSim and through Stash's policies
# (the simulator, which runs DiskCache's own policy code, and a real MemoryCache for the memory
# tier's policies), checks the simulator against a real DiskCache on trace prefixes, and writes
# the tables of Benchmarks/POLICIES.md (a full run only).
#
#   Benchmarks/traces/run-traces.sh [--quick] [--keep-libcachesim] [--seed N]
#
# Traces (1 000 000 requests each; --quick: 100 000): Zipf 0.6, 0.8, 1.0 and 1.2 over
# 100 000 objects with lognormal sizes (median 30 KiB, sigma 1.2), a photo feed, a photo app
# with the reuse of issue 13's unseen trace, a loop just larger than a 5 % cache and a
# popularity shift halfway (gen_workloads.py). Cache sizes 1 %,
# 5 % and 10 % of each trace's working set.
# --keep-libcachesim reuses out/traces/replay.jsonl when it is newer than every trace (the
# libCacheSim replays take most of the time: W-TinyLFU alone runs minutes on the photo feed).
# Output: Benchmarks/out/traces/ (never committed): the traces, replay.jsonl (libCacheSim),
# stash-replay.jsonl, end-to-end.jsonl, policies.md (per-trace tables), targets.md, memory.md
# and end-to-end.md (together summary.md); a full run also replaces the tables in POLICIES.md.
# --seed N generates the traces from another seed (default 1; only seed 1's full run writes
# POLICIES.md), to check that a change was not tuned to one draw of the traces.
# STASH_TRACES_OUT=DIR writes the traces and tables there instead (e.g. to keep a --quick
# run's libCacheSim results beside the full run's).
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$bench_dir/.." && pwd)"
venv="$bench_dir/.venv"
out="${STASH_TRACES_OUT:-$bench_dir/out/traces}"
requirements=("numpy>=1.23" "libcachesim==0.3.5")
scratch="${STASH_SCRATCH:-.build}"

requests=1000000
e2e_limit=30000
keep_libcachesim=0
seed=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) requests=100000; e2e_limit=10000 ;;
        --keep-libcachesim) keep_libcachesim=1 ;;
        --seed) seed="${2:?--seed needs a number}"; shift ;;
        *) echo "usage: run-traces.sh [--quick] [--keep-libcachesim] [--seed N]" >&2; exit 2 ;;
    esac
    shift
done
objects=$((requests / 10))

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"
python="$venv/bin/python"

mkdir -p "$out"
traces=()
for alpha in 0.6 0.8 1.0 1.2; do
    name="zipf-a${alpha}-lognormal-${requests}.csv"
    [[ -s "$out/$name" ]] || "$python" "$bench_dir/traces/gen_zipf.py" --alpha "$alpha" \
        --size lognormal:median=30720,sigma=1.2 --requests "$requests" --objects "$objects" --seed "$seed" -o "$out/$name"
    traces+=("$out/$name")
done
for kind in photo-feed photo-app loop shift; do
    name="$kind-${requests}.csv"
    [[ -s "$out/$name" ]] || "$python" "$bench_dir/traces/gen_workloads.py" "$kind" --requests "$requests" \
        --seed "$seed" -o "$out/$name"
    traces+=("$out/$name")
done

fresh=1
for trace in "${traces[@]}"; do
    [[ -s "$out/replay.jsonl" && "$out/replay.jsonl" -nt "$trace" ]] || fresh=0
done
if [[ $keep_libcachesim == 0 || $fresh == 0 ]]; then
    # libCacheSim logs INFO lines on stderr; keep them out of the way.
    "$python" "$bench_dir/traces/libcachesim_replay.py" "${traces[@]}" --markdown "$out/replay.md" \
        > "$out/replay.jsonl" 2> "$out/replay.log" || {
        tail -n 20 "$out/replay.log" >&2
        exit 1
    }
fi

(cd "$root" && swift build -c release --scratch-path "$scratch" --product StashBenchmarks >&2)
stash="$root/$scratch/release/StashBenchmarks"
: > "$out/stash-replay.jsonl"
: > "$out/end-to-end.jsonl"
mkdir -p "$root/$scratch/replay-scratch"
for trace in "${traces[@]}"; do
    "$stash" replay "$trace" --cache-size 1%,5%,10% --policy all --low-water-mark 1.0 --json \
        >> "$out/stash-replay.jsonl"
    "$stash" replay "$trace" --cache-size 1%,5%,10% --policy adaptive,s3-fifo --low-water-mark 0.99,0.95,0.9 \
        --json >> "$out/stash-replay.jsonl"
    # The memory tier: a real MemoryCache per policy, cost = the object's size. Its sketch hashes
    # keys with Swift's per-process seed; a fixed seed makes the tables reproducible.
    SWIFT_DETERMINISTIC_HASHING=1 "$stash" replay "$trace" --cache-size 1%,5%,10% --mode memory --policy all \
        --json >> "$out/stash-replay.jsonl"
    # The simulator against a real DiskCache, request by request (exits non-zero on a difference).
    "$stash" replay "$trace" --cache-size 5% --policy adaptive --low-water-mark 1.0,0.9 --mode both \
        --limit "$e2e_limit" --dir "$root/$scratch/replay-scratch" --json >> "$out/end-to-end.jsonl"
done

"$python" "$bench_dir/traces/policy_table.py" "$out/stash-replay.jsonl" "$out/replay.jsonl" > "$out/policies.md"
"$python" "$bench_dir/traces/policy_table.py" "$out/stash-replay.jsonl" "$out/replay.jsonl" --summary \
    > "$out/targets.md"
"$python" "$bench_dir/traces/policy_table.py" "$out/stash-replay.jsonl" "$out/replay.jsonl" --memory \
    > "$out/memory.md"
"$python" "$bench_dir/traces/policy_table.py" "$out/end-to-end.jsonl" --end-to-end > "$out/end-to-end.md"
cat "$out/targets.md" "$out/memory.md" "$out/end-to-end.md" > "$out/summary.md"
cat "$out/summary.md"
echo "(per-trace tables in ${out#"$root/"}/policies.md, end to end in end-to-end.jsonl)" >&2

# A full run (not --quick) writes its tables into Benchmarks/POLICIES.md, between the
# <!-- run-traces.sh: NAME --> and <!-- /run-traces.sh: NAME --> markers; the prose is edited by hand.
if [[ $requests == 1000000 && $seed == 1 ]]; then
    "$python" - "$bench_dir/POLICIES.md" "$out" <<'PYTHON'
import re
import sys

path, out = sys.argv[1], sys.argv[2]
text = open(path).read()
for name, file in (
    ("summary", "targets.md"), ("memory", "memory.md"), ("end-to-end", "end-to-end.md"), ("per-trace", "policies.md")
):
    body = open(f"{out}/{file}").read().strip()
    marker = re.compile(rf"(<!-- run-traces.sh: {name} -->\n).*?(\n<!-- /run-traces.sh: {name} -->)", re.S)
    text, count = marker.subn(lambda match: match.group(1) + body + match.group(2), text)
    if count != 1:
        sys.exit(f"{path}: no <!-- run-traces.sh: {name} --> block to replace")
open(path, "w").write(text)
PYTHON
    echo "(tables written into ${bench_dir#"$root/"}/POLICIES.md)" >&2
fi
