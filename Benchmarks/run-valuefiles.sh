#!/usr/bin/env bash
# Stores of medium values (issue 30): a file per value against segment files
# appended once per batch (Benchmarks/floor/valuefiles.c), beside python-diskcache's `set`, in
# interleaved rounds. Prints a table of medians over the rounds and the ratios measured in each
# round (then their median).
#
#   Benchmarks/run-valuefiles.sh [--rounds 3] [--dir PARENT] [--sizes 32768,262144,2097152]
#                                [--full] [--no-diskcache]
#
#   --full   stores into a full cache (64 MiB, as run-comparison.sh's set-full): one eviction
#            per store for a file per value, one segment reclaimed at a time for segments
set -euo pipefail
bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds=3
parent="${TMPDIR:-/tmp}"
sizes="32768,262144,2097152"
full=0
diskcache=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        --sizes) sizes="$2"; shift ;;
        --full) full=$((64 << 20)) ;;
        --no-diskcache) diskcache=0 ;;
        -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "run-valuefiles.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
out="$bench_dir/out/valuefiles"
mkdir -p "$out" "$parent"
rm -f "$out"/*.jsonl
cc -O2 -Wall -Wextra -o "$out/valuefiles" "$bench_dir/floor/valuefiles.c" -lsqlite3
venv="$bench_dir/.venv"
if [[ $diskcache == 1 && ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
if [[ $diskcache == 1 ]]; then
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "diskcache==5.6.3"
fi
declare -A count=([32768]=500 [262144]=200 [2097152]=100)
workload=set
[[ $full != 0 ]] && workload=set-full
# Each round starts one step further along the list: on a file system where creating an inode
# costs more right after many were deleted (ext4 skips recently freed inodes), each layout then
# follows the others' clean-ups in turn.
order=(diskcache file-tmp-rename file-xattr file-direct file-plain segment)
for round in $(seq 1 "$rounds"); do
    shift_by=$(( (round - 1) % ${#order[@]} ))
    for size in ${sizes//,/ }; do
        n="${count[$size]:-100}"
        echo "== round $round, $size bytes (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        for mode in "${order[@]:$shift_by}" "${order[@]:0:$shift_by}"; do
            if [[ $mode == diskcache ]]; then
                [[ $diskcache == 1 ]] || continue
                "$venv/bin/python" "$bench_dir/python/diskcache_bench.py" --workloads "$workload" --lru-workloads '' \
                    --sizes "$size" --runs 1 --dir "$parent" 2>/dev/null |
                    sed "s/}\$/, \"round\": $round}/" >> "$out/diskcache.jsonl"
                continue
            fi
            "$out/valuefiles" --mode "$mode" --size "$size" --count "$n" --full "$full" --dir "$parent" |
                sed "s/}\$/, \"round\": $round}/" >> "$out/valuefiles.jsonl"
        done
    done
done
python3 - "$out" <<'EOF'
import json, statistics, sys, collections
out = sys.argv[1]
rows = collections.defaultdict(dict)  # (size, round) -> {name: ns}
for line in open(f"{out}/valuefiles.jsonl"):
    d = json.loads(line)
    rows[(d["value_size"], d["round"])][d["mode"]] = d["ns_per_op"]
try:
    for line in open(f"{out}/diskcache.jsonl"):
        d = json.loads(line)
        rows[(d["value_size"], d["round"])]["diskcache"] = d["median_ns_per_op"]
except FileNotFoundError:
    pass
names = ["diskcache", "file-tmp-rename", "file-xattr", "file-direct", "file-plain", "segment"]
sizes = sorted({s for s, _ in rows})
print("| size | " + " | ".join(names) + " | file-tmp-rename / file-xattr | file-xattr / segment |")
print("|---:|" + "---:|" * (len(names) + 2))
for size in sizes:
    rounds = [r for (s, r) in rows if s == size]
    med = lambda n: statistics.median([rows[(size, r)][n] for r in rounds if n in rows[(size, r)]] or [0])
    ratio = lambda a, b: statistics.median(rows[(size, r)][a] / rows[(size, r)][b] for r in rounds)
    label = f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"
    cells = [f"{med(n) / 1000:.1f} µs" if med(n) else "—" for n in names]
    print(f"| {label} | " + " | ".join(cells) + f" | {ratio('file-tmp-rename', 'file-xattr'):.2f}× | "
          f"{ratio('file-xattr', 'segment'):.1f}× |")
print(f"\n({len(set(r for _, r in rows))} rounds; µs per store, medians; ratios are per round, then the median)")
EOF
