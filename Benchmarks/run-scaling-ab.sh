#!/usr/bin/env bash
# run-scaling.sh's workloads for two builds of StashBenchmarks side by side (an A/B of a change),
# interleaved with python-diskcache and the SQLite floor in every round: A, B, diskcache, floor,
# A, B, ... so that all four see the same machine load. Each build fills its own template cache
# (a format change cannot share one). The JSON lines name the builds "stash-a" and "stash-b".
#
#   Benchmarks/run-scaling-ab.sh A_BINARY B_BINARY [--entries 100000,1000000] [--rounds 3]
#                                [--dir PARENT] [--out FILE]
#
# Build A from the old commit into a copy (git archive OLD | tar -x -C /tmp/old; swift build -c
# release --product StashBenchmarks there), B here. Results: Benchmarks/out/scaling-ab.jsonl.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 2 ]] || { sed -n '2,12p' "$0"; exit 2; }
a="$1"; b="$2"; shift 2
venv="$bench_dir/.venv"
entries="100000,1000000"
rounds=3
parent="${TMPDIR:-/tmp}"
results="$bench_dir/out/scaling-ab.jsonl"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --entries) entries="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        --out) results="$2"; shift ;;
        *) echo "run-scaling-ab.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "diskcache==5.6.3"
mkdir -p "$bench_dir/out" "$parent"
floor="$bench_dir/out/sqlitefloor"
cc -O2 -o "$floor" "$bench_dir/floor/sqlitefloor.c" -lsqlite3
: > "$results"
for n in ${entries//,/ }; do
    for round in $(seq 1 "$rounds"); do
        for side in a b; do
            binary="$a"; [[ "$side" == b ]] && binary="$b"
            echo "== $(date -u +%T) $n entries, round $round: stash-$side" >&2
            "$binary" scaling --entries "$n" --round "$round" --dir "$parent" \
                --template "$parent/template-$side-$n" | sed "s/\"impl\": \"stash\"/\"impl\": \"stash-$side\"/" \
                >> "$results"
        done
        echo "== $(date -u +%T) $n entries, round $round: diskcache" >&2
        (cd "$bench_dir/python" && "$venv/bin/python" diskcache_scaling.py --entries "$n" --round "$round" \
            --dir "$parent" --template "$parent/template-diskcache-$n") >> "$results"
        echo "== $(date -u +%T) $n entries, round $round: sqlite floor" >&2
        "$floor" --entries "$n" --round "$round" --dir "$parent" >> "$results"
    done
    rm -rf "$parent/template-a-$n" "$parent/template-b-$n" "$parent/template-diskcache-$n"
done
"$venv/bin/python" "$bench_dir/scaling_ab_table.py" "$results"
