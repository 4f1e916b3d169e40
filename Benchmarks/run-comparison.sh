#!/usr/bin/env bash
# Runs the disk-cache micro-benchmarks (python-diskcache, the C file-system
# floor and, if asked, Stash) one after another and prints one markdown table.
#
#   Benchmarks/run-comparison.sh [--quick] [--runs N] [--dir PARENT] [--swift "COMMAND"]
#
#   --quick        ops / 10 and 3 runs: a smoke test, not numbers to quote
#   --runs N       timed runs per cell (default 5, after 1 warm-up)
#   --dir PARENT   where the benchmarks make their temporary caches (default
#                  $TMPDIR or /tmp); put it on the file system you care about
#   --swift CMD    command, run from the repository root, that prints Stash's
#                  results as JSON lines ("impl":"stash"), e.g.
#                  --swift "swift run -c release StashBenchmarks --json"
#                  (also read from $STASH_BENCH_CMD). Its flags are passed as
#                  given: add --quick to CMD yourself if the executable has it.
#
# Results: Benchmarks/out/results/*.jsonl and Benchmarks/out/comparison.md.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
out="$bench_dir/out"
venv="$bench_dir/.venv"
# Pinned so that numbers from different days compare like with like.
diskcache_requirement="diskcache==5.6.3"

quick=()
runs=()
dir_args=()
swift_cmd="${STASH_BENCH_CMD:-}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=(--quick) ;;
        --runs) runs=(--runs "$2"); shift ;;
        --dir) dir_args=(--dir "$2"); shift ;;
        --swift) swift_cmd="$2"; shift ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "run-comparison.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

mkdir -p "$out/results"
rm -f "$out/results/"*.jsonl

if [[ ! -x "$venv/bin/python" ]]; then
    echo "== creating $venv" >&2
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$diskcache_requirement"

echo "== building the file-system floor" >&2
cc -O2 -Wall -Wextra -o "$out/fsfloor" "$bench_dir/floor/fsfloor.c"

# One at a time: on a 2-core machine concurrent benchmarks measure each other.
echo "== floor" >&2
"$out/fsfloor" "${quick[@]}" "${runs[@]}" "${dir_args[@]}" > "$out/results/floor.jsonl"

echo "== python-diskcache" >&2
"$venv/bin/python" "$bench_dir/python/diskcache_bench.py" "${quick[@]}" "${runs[@]}" "${dir_args[@]}" \
    > "$out/results/diskcache.jsonl"

if [[ -n "$swift_cmd" ]]; then
    echo "== Stash: $swift_cmd" >&2
    # Build output may land on stdout too; merge_table.py skips non-JSON lines.
    # The same --dir as the others: file creation cost depends heavily on the directory
    # (on this VM 27 µs per create under /work but 400 µs under a crowded /tmp).
    (cd "$repo_root" && eval "$swift_cmd ${dir_args[*]}") > "$out/results/stash.jsonl"
else
    echo "== Stash: skipped (no --swift command given)" >&2
fi

echo >&2
"$venv/bin/python" "$bench_dir/merge_table.py" "$out/results/"*.jsonl -o "$out/comparison.md"
echo >&2
echo "(also written to ${out#"$repo_root/"}/comparison.md)" >&2
