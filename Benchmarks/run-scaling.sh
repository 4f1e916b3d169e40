#!/usr/bin/env bash
# Cost per operation against the number of entries: Stash's DiskCache beside
# python-diskcache, 1 KiB values, rounds interleaved (Stash, diskcache, SQLite floor,
# Stash, …) so that all see the same machine load. Prints the markdown table of medians.
# The SQLite floor (floor/sqlitefloor.c) is the least work a cache that commits one SQLite
# transaction per write can do: a lower bound for both.
#
#   Benchmarks/run-scaling.sh [--entries 1000,10000,100000,1000000] [--rounds 3]
#                             [--dir PARENT] [--throughput]
#
#   --entries LIST  cache sizes (default 1000,10000,100000,1000000)
#   --rounds N      interleaved rounds per size (default 3); the table shows medians
#   --dir PARENT    where the caches are made (default $TMPDIR or /tmp); each size is
#                   filled once into PARENT/template-* and copied for every round
#   --throughput    also measure Stash's get-hit throughput with 1, 2, 4 threads and
#                   2, 4 processes
#
# Needs the release benchmark executable (swift build -c release --product StashBenchmarks)
# and a C compiler with libsqlite3-dev (for the floor).
# Results: Benchmarks/out/scaling.jsonl and Benchmarks/out/scaling.md.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
out="$bench_dir/out"
venv="$bench_dir/.venv"
entries="1000,10000,100000,1000000"
rounds=3
parent="${TMPDIR:-/tmp}"
throughput=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --entries) entries="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        --throughput) throughput=1 ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "run-scaling.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

stash="$repo_root/.build/release/StashBenchmarks"
[[ -x "$stash" ]] || { echo "run-scaling.sh: build $stash first" >&2; exit 1; }
if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "diskcache==5.6.3"

mkdir -p "$out" "$parent"
floor="$out/sqlitefloor"
cc -O2 -o "$floor" "$bench_dir/floor/sqlitefloor.c" -lsqlite3
results="$out/scaling.jsonl"
: > "$results"
for n in ${entries//,/ }; do
    for round in $(seq 1 "$rounds"); do
        echo "== $n entries, round $round: stash" >&2
        "$stash" scaling --entries "$n" --round "$round" --dir "$parent" \
            --template "$parent/template-stash-$n" >> "$results"
        echo "== $n entries, round $round: diskcache" >&2
        (cd "$bench_dir/python" && "$venv/bin/python" diskcache_scaling.py --entries "$n" --round "$round" \
            --dir "$parent" --template "$parent/template-diskcache-$n") >> "$results"
        echo "== $n entries, round $round: sqlite floor" >&2
        "$floor" --entries "$n" --round "$round" --dir "$parent" >> "$results"
    done
    rm -rf "$parent/template-stash-$n" "$parent/template-diskcache-$n"
done
if [[ "$throughput" == 1 ]]; then
    echo "== get-hit throughput" >&2
    "$stash" hit-throughput --dir "$parent" >> "$results"
fi
"$venv/bin/python" "$bench_dir/scaling_table.py" "$results" | tee "$out/scaling.md"
