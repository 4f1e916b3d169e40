#!/usr/bin/env bash
# Generates the standard Zipf traces and replays them through libCacheSim.
#
#   Benchmarks/traces/run-traces.sh [--quick]
#
# Traces: alpha 0.8 and 1.0, each with fixed 32 KiB objects and with
# lognormal sizes (median 30 KiB, sigma 1.2); 1 000 000 requests over
# 100 000 objects (--quick: 100 000 requests over 10 000 objects).
# Output: Benchmarks/out/traces/*.csv (never committed), replay.jsonl and
# replay.md next to them.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$bench_dir/.venv"
out="$bench_dir/out/traces"
requirements=("numpy>=1.23" "libcachesim==0.3.5")

requests=1000000
objects=100000
case "${1:-}" in
    --quick) requests=100000; objects=10000 ;;
    "") ;;
    *) echo "usage: run-traces.sh [--quick]" >&2; exit 2 ;;
esac

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${requirements[@]}"

mkdir -p "$out"
traces=()
for alpha in 0.8 1.0; do
    for size in fixed:32768 lognormal:median=30720,sigma=1.2; do
        name="zipf-a${alpha}-${size%%:*}-${requests}.csv"
        "$venv/bin/python" "$bench_dir/traces/gen_zipf.py" --alpha "$alpha" --size "$size" \
            --requests "$requests" --objects "$objects" --seed 1 -o "$out/$name"
        traces+=("$out/$name")
    done
done

# libCacheSim logs INFO lines on stderr; keep them out of the way.
"$venv/bin/python" "$bench_dir/traces/libcachesim_replay.py" "${traces[@]}" --markdown "$out/replay.md" \
    > "$out/replay.jsonl" 2> "$out/replay.log" || {
    tail -n 20 "$out/replay.log" >&2
    exit 1
}
cat "$out/replay.md"
echo "(JSON lines in ${out#"$bench_dir/"}/replay.jsonl, libCacheSim's log in replay.log)" >&2
