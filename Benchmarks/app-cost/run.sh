#!/usr/bin/env bash
# What Stash costs an app: a clean `swift package resolve` plus a debug `swift build` of a small app that
# uses DiskCache and ResourceLoader (Benchmarks/app-cost/App), depending on Stash by path, at two revisions
# of this repository (default: the last commit before package traits, and HEAD), interleaved for ROUNDS
# rounds. Prints, per revision, the packages resolved, the bytes of checkouts fetched into .build/ and the
# median seconds of resolve and build, as a Markdown table.
#
#   Benchmarks/app-cost/run.sh [--rounds 3] [BEFORE_REV] [AFTER_REV]
set -euo pipefail
rounds=3
if [ "${1:-}" = "--rounds" ]; then rounds="$2"; shift 2; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
before="${1:-5b3e6bd}"
after="${2:-HEAD}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for label in before after; do
    rev="$before"; [ "$label" = after ] && rev="$after"
    git -C "$root" archive --format=tar --prefix="stash-$label/" "$rev" | tar -x -C "$work"
done
now() { date +%s.%N; }
for round in $(seq 1 "$rounds"); do
    for label in before after; do
        app="$work/app-$label-$round"
        mkdir -p "$app/Sources/App"
        sed -e "s#STASH_PATH#$work/stash-$label#" -e "s#STASH_ID#stash-$label#g" "$root/Benchmarks/app-cost/App/Package.swift.in" > "$app/Package.swift"
        cp "$root/Benchmarks/app-cost/App/main.swift" "$app/Sources/App/main.swift"
        # A clean resolve: no .build, no shared cache of checkouts beyond SwiftPM's mirror of git repositories.
        t0=$(now); (cd "$app" && swift package resolve >/dev/null 2>&1); t1=$(now)
        (cd "$app" && swift build >/dev/null 2>&1); t2=$(now)
        packages=$(grep -c '"identity"' "$app/Package.resolved" 2>/dev/null || echo 0)
        bytes=$(du -sb "$app/.build/checkouts" "$app/.build/repositories" 2>/dev/null | awk '{s+=$1} END {print s+0}')
        echo "$label $round $packages $bytes $(echo "$t1 - $t0" | bc) $(echo "$t2 - $t1" | bc)" | tee -a "$work/results" >&2
        rm -rf "$app"
    done
done
python3 - "$work/results" "$before" "$after" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print("| revision | packages resolved | bytes fetched (checkouts) | resolve, s (median) | debug build, s (median) |")
print("|---|---:|---:|---:|---:|")
for label, rev in (("before", sys.argv[2]), ("after", sys.argv[3])):
    mine = [r for r in rows if r[0] == label]
    med = lambda i: statistics.median(float(r[i]) for r in mine)
    print(f"| {label} ({rev}) | {mine[0][2]} | {int(med(3)):,} | {med(4):.1f} | {med(5):.1f} |")
PY
