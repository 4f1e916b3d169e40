#!/usr/bin/env bash
# Issue 30's comparison at 1 KiB - 2 MiB: interleaved rounds of python-diskcache, Stash's
# default write-behind, Stash with value files written by the background writer
# (--files-on-writer) and Stash's commit-per-store mode (--immediate), the workloads of
# run-comparison.sh. A store's time is (N stores + flush()) / N. Prints three tables of medians
# over the rounds (rounds_table.py), each against the same rounds' diskcache figures.
#
#   Benchmarks/run-writebehind-rounds.sh [--rounds 3] [--dir PARENT] [--quick]
#
#   --quick   a tenth of the operations on both sides (what a loaded machine has time for)
set -euo pipefail
bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
rounds=3
parent="${TMPDIR:-/tmp}"
quick=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        --quick) quick=(--quick) ;;
        *) echo "run-writebehind-rounds.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
stash="$repo_root/.build/release/StashBenchmarks"
[[ -x "$stash" ]] || { echo "build $stash first" >&2; exit 1; }
only="--only set,get-hit,get-miss,set-full,delete"
out="$bench_dir/out/writebehind-rounds"
rm -rf "$out"
venv="$bench_dir/.venv"
if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "diskcache==5.6.3"
for round in $(seq 1 "$rounds"); do
    mkdir -p "$out/default/$round" "$out/files-on-writer/$round" "$out/immediate/$round"
    echo "== round $round: python-diskcache" >&2
    "$venv/bin/python" "$bench_dir/python/diskcache_bench.py" "${quick[@]}" --runs 3 --dir "$parent" \
        > "$out/default/$round/diskcache.jsonl"
    for variant in default files-on-writer immediate; do
        echo "== round $round: Stash $variant" >&2
        flag=()
        if [[ "$variant" != default ]]; then
            flag=("--$variant")
            cp "$out/default/$round/diskcache.jsonl" "$out/$variant/$round/"
        fi
        # shellcheck disable=SC2086
        "$stash" --json --no-memory --no-concurrency $only "${quick[@]}" --runs 3 --dir "$parent" "${flag[@]}" \
            > "$out/$variant/$round/stash.jsonl"
    done
done
for variant in default files-on-writer immediate; do
    echo
    echo "Stash ($variant):"
    echo
    python3 "$bench_dir/rounds_table.py" "$out/$variant/"*
done
