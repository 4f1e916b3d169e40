#!/usr/bin/env bash
# Issue 30's comparison at 1 KiB - 2 MiB: interleaved rounds of run-comparison.sh (Stash's
# default write-behind, python-diskcache, the file-system floor), each followed by Stash with
# value files written by the background writer (--files-on-writer) and Stash's commit-per-store
# mode (--immediate). A store's time is (N stores + flush()) / N. Prints three tables of medians
# over the rounds (rounds_table.py), each against the same rounds' diskcache figures.
#
#   Benchmarks/run-writebehind-rounds.sh [--rounds 3] [--dir PARENT]
set -euo pipefail
bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
rounds=3
parent="${TMPDIR:-/tmp}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        *) echo "run-writebehind-rounds.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
stash="$repo_root/.build/release/StashBenchmarks"
[[ -x "$stash" ]] || { echo "build $stash first" >&2; exit 1; }
only="--only set,get-hit,get-miss,set-full,delete"
out="$bench_dir/out/writebehind-rounds"
rm -rf "$out"
for round in $(seq 1 "$rounds"); do
    echo "== round $round: default (write-behind), diskcache, floor" >&2
    "$bench_dir/run-comparison.sh" --runs 3 --dir "$parent" \
        --swift "$stash --json --no-memory --no-concurrency $only" > /dev/null
    mkdir -p "$out/default/$round" "$out/files-on-writer/$round" "$out/immediate/$round"
    cp "$bench_dir/out/results/"*.jsonl "$out/default/$round/"
    for variant in files-on-writer immediate; do
        echo "== round $round: $variant" >&2
        cp "$bench_dir/out/results/diskcache.jsonl" "$bench_dir/out/results/floor.jsonl" "$out/$variant/$round/"
        # shellcheck disable=SC2086
        "$stash" --json --no-memory --no-concurrency $only --runs 3 --dir "$parent" "--$variant" \
            > "$out/$variant/$round/stash.jsonl"
    done
done
for variant in default files-on-writer immediate; do
    echo
    echo "Stash ($variant):"
    echo
    python3 "$bench_dir/rounds_table.py" "$out/$variant/"*
done
