#!/usr/bin/env bash
# An A/B of stores of medium values (issue 30): interleaved rounds of python-diskcache,
# a StashBenchmarks build from before the change (--before) and one from after it (--after),
# the latter with value files written on the storing thread (--files-on-caller) and by the
# background writer (--files-on-writer). The workloads are run-comparison.sh's `set` and
# `set-full` (a store's time is (N stores + flush()) / N). Prints one table per variant, each
# against the same rounds' diskcache figures (rounds_table.py), and the load average of each round.
#
#   Benchmarks/run-valuefiles-rounds.sh --before BIN --after BIN [--rounds 3] [--dir PARENT]
#                                       [--sizes 32768,262144,2097152] [--only set,set-full]
set -euo pipefail
bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds=3
parent="${TMPDIR:-/tmp}"
sizes="32768,262144,2097152"
only="set,set-full"
before=""
after=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        --sizes) sizes="$2"; shift ;;
        --only) only="$2"; shift ;;
        --before) before="$2"; shift ;;
        --after) after="$2"; shift ;;
        -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "run-valuefiles-rounds.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ -x "$before" && -x "$after" ]] || { echo "run-valuefiles-rounds.sh: give --before and --after binaries" >&2; exit 2; }
venv="$bench_dir/.venv"
if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "diskcache==5.6.3"
out="$bench_dir/out/valuefiles-rounds"
rm -rf "$out"
variants=(before after-caller after-writer)
# Each round starts one step further along the list: on a file system where creating an inode
# costs more right after many were deleted (ext4 skips recently freed inodes), every
# implementation then follows each of the others' clean-ups once.
order=(diskcache "${variants[@]}")
for round in $(seq 1 "$rounds"); do
    for variant in "${variants[@]}"; do mkdir -p "$out/$variant/$round"; done
    shift_by=$(( (round - 1) % ${#order[@]} ))
    for variant in "${order[@]:$shift_by}" "${order[@]:0:$shift_by}"; do
        if [[ $variant == diskcache ]]; then
            echo "== round $round: python-diskcache (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
            "$venv/bin/python" "$bench_dir/python/diskcache_bench.py" --workloads "$only" --lru-workloads '' \
                --sizes "$sizes" --runs 3 --dir "$parent" > "$out/diskcache-$round.jsonl" 2>/dev/null
            continue
        fi
        case "$variant" in
            before) command=("$before") ;;
            after-caller) command=("$after" --files-on-caller) ;;
            after-writer) command=("$after" --files-on-writer) ;;
        esac
        echo "== round $round: Stash $variant (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        "${command[@]}" --json --no-memory --no-concurrency --only "$only" --sizes "$sizes" --runs 3 \
            --dir "$parent" > "$out/$variant/$round/stash.jsonl" 2>/dev/null
    done
    for variant in "${variants[@]}"; do cp "$out/diskcache-$round.jsonl" "$out/$variant/$round/diskcache.jsonl"; done
done
for variant in "${variants[@]}"; do
    echo
    echo "Stash ($variant):"
    echo
    python3 "$bench_dir/rounds_table.py" "$out/$variant/"*
done
